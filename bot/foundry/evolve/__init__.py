"""The optimizer: islands led by expert roles, selection, migration, budget, and the
propose → evaluate → record loop. Sees writers, the evaluator and the experience library only
through foundry.core.protocols."""

from foundry.evolve.budget import Budget, BudgetTracker, TokenMeter
from foundry.evolve.executor import Executor, LocalExecutor
from foundry.evolve.experts import ExpertRole, assign_experts, load_experts
from foundry.evolve.island import Island, Member
from foundry.evolve.loop import HistoryEntry, Optimizer, SearchConfig, SearchResult
from foundry.evolve.progress import Progress, make_progress
from foundry.evolve.scoring import Score, score, static_cost

__all__ = [
    "Budget",
    "BudgetTracker",
    "Executor",
    "ExpertRole",
    "HistoryEntry",
    "Island",
    "LocalExecutor",
    "Member",
    "Optimizer",
    "Progress",
    "Score",
    "SearchConfig",
    "SearchResult",
    "TokenMeter",
    "assign_experts",
    "load_experts",
    "make_progress",
    "score",
    "static_cost",
]
