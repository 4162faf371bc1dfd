"""The search budget: candidates evaluated, wall time and LLM tokens, each bounded."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


@runtime_checkable
class TokenMeter(Protocol):
    """A writer that spends LLM tokens says how many it has used so far."""

    @property
    def tokens_used(self) -> int: ...


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    candidates: int = Field(default=32, ge=1)  # candidates evaluated (writer failures count too)
    wall_s: float | None = Field(default=None, gt=0)  # the search stops proposing after this
    tokens: int | None = Field(default=None, ge=0)  # LLM tokens over all writers


class BudgetTracker:
    def __init__(
        self,
        budget: Budget,
        meters: Sequence[object] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.budget = budget
        self.meters = [m for m in meters if isinstance(m, TokenMeter)]
        self.clock = clock
        self.started = clock()
        self.evaluated = 0

    @property
    def elapsed_s(self) -> float:
        return self.clock() - self.started

    @property
    def tokens_used(self) -> int:
        return sum(m.tokens_used for m in self.meters)

    @property
    def remaining(self) -> int:
        return max(self.budget.candidates - self.evaluated, 0)

    def spend(self, count: int = 1) -> None:
        self.evaluated += count

    def exhausted(self) -> str | None:
        """Why the search must stop now, or None while budget is left."""
        if self.evaluated >= self.budget.candidates:
            return f"candidate budget of {self.budget.candidates} spent"
        if self.budget.wall_s is not None and self.elapsed_s >= self.budget.wall_s:
            return f"wall-time budget of {self.budget.wall_s:.0f} s spent"
        if self.budget.tokens is not None and self.meters and self.tokens_used >= self.budget.tokens:
            return f"LLM token budget of {self.budget.tokens} spent ({self.tokens_used} used)"
        return None
