"""The seams between the optimizer and the parts it drives. evolve/ sees only these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import Field

from foundry.core.records import Candidate, OperatorSpec, Record, Verdict


class Hint(Record):
    """A piece of retrieved experience offered to a writer."""

    id: str
    suggestion: str
    genes: dict[str, int | float | str | bool] = Field(default_factory=dict)
    source: str = "seed"  # seed | library


class ProposalRequest(Record):
    spec: OperatorSpec
    operator_source: str
    expert: str  # expert role name from rules/experts
    island: int
    generation: int
    count: int = 1
    seed: int = 0
    parent: Candidate | None = None
    parent_verdict: Verdict | None = None
    hints: tuple[Hint, ...] = ()
    past_kernels: tuple[Candidate, ...] = ()


class Evaluator(Protocol):
    def evaluate(self, candidate: Candidate) -> Verdict: ...


class Writer(Protocol):
    name: str

    def propose(self, request: ProposalRequest) -> Sequence[Candidate]: ...


class ExperienceSink(Protocol):
    def record(self, spec: OperatorSpec, candidate: Candidate, verdict: Verdict) -> None: ...

    def retrieve(self, spec: OperatorSpec, k: int) -> tuple[Sequence[Hint], Sequence[Candidate]]: ...
