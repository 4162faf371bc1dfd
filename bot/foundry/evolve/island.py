"""One island: an expert role, a population, an elite archive, tournament selection, stagnation."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from foundry.core.records import Candidate, IslandSummary, Verdict
from foundry.evolve.experts import ExpertRole
from foundry.evolve.scoring import Score, fitness, score


@dataclass(frozen=True)
class Member:
    """An evaluated candidate as the optimizer keeps it."""

    candidate: Candidate
    verdict: Verdict
    score: Score | None  # None when not verified
    fitness: float
    order: int  # global evaluation order: ties go to the older member, so runs are reproducible
    origin: str = ""  # root of the lineage ("library" for retrieved kernels, else the writer)

    @classmethod
    def of(
        cls, candidate: Candidate, verdict: Verdict, order: int, origin: str = "", expect_timing: bool = False
    ) -> Member:
        return cls(
            candidate,
            verdict,
            score(candidate, verdict, expect_timing),
            fitness(candidate, verdict, expect_timing),
            order,
            origin,
        )

    @property
    def verified(self) -> bool:
        return self.verdict.verified

    def rank_key(self) -> tuple[float, int]:
        return (-self.fitness, self.order)


@dataclass
class Island:
    index: int
    expert: ExpertRole
    population_size: int = 8
    elite_size: int = 3
    tournament_size: int = 3
    population: list[Member] = field(default_factory=list)
    elites: list[Member] = field(default_factory=list)  # verified only, best first
    evaluated: int = 0
    verified: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    last_improvement: int = 0  # generation of the last new best (or of the last migration)

    @property
    def best(self) -> Member | None:
        return self.elites[0] if self.elites else None

    def add(self, member: Member, generation: int) -> bool:
        """Record an evaluated candidate; True when it is a new best of this island."""
        self.evaluated += 1
        if member.verified:
            self.verified += 1
        elif member.verdict.failure is not None:
            self.failures[str(member.verdict.failure.kind)] += 1
        improved = self._admit(member)
        if improved:
            self.last_improvement = generation
        return improved

    def receive(self, migrant: Member, generation: int) -> None:
        """A migrant elite from another island joins the population and the archive."""
        self._admit(migrant)
        self.last_improvement = generation  # give the island time to use what it received

    def _admit(self, member: Member) -> bool:
        before = self.best.fitness if self.best else None
        has_source = bool(member.candidate.source.strip())  # a writer's failure is nobody's parent
        if has_source and all(m.candidate.id != member.candidate.id for m in self.population):
            self.population.append(member)
            self.population.sort(key=Member.rank_key)
            del self.population[self.population_size :]
        if member.verified and all(m.candidate.id != member.candidate.id for m in self.elites):
            self.elites.append(member)
            self.elites.sort(key=Member.rank_key)
            del self.elites[self.elite_size :]
        after = self.best.fitness if self.best else None
        return after is not None and (before is None or after > before)

    def select_parent(self, rng: random.Random) -> Member | None:
        """Tournament on fitness among the population (failed members compete below verified ones,
        so an island with nothing verified yet repairs its most promising failure)."""
        if not self.population:
            return None
        size = min(self.tournament_size, len(self.population))
        contestants = rng.sample(self.population, size)
        return min(contestants, key=Member.rank_key)

    def stagnant(self, generation: int, patience: int) -> bool:
        return generation - self.last_improvement >= patience

    def summary(self) -> IslandSummary:
        best = self.best
        return IslandSummary(
            island=self.index,
            expert=self.expert.name,
            evaluated=self.evaluated,
            verified=self.verified,
            best_candidate_id=best.candidate.id if best else None,
            best_speedup=best.score.value if best and best.score and best.score.measured else None,
            best_score=best.score.value if best and best.score else None,
            failures=dict(sorted(self.failures.items())),
        )
