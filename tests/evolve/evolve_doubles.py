"""Small deterministic Writer and Evaluator implementations for unit tests of the search logic
(selection, migration, budget). They speak the protocols of foundry.core.protocols; the real writers
and the real evaluator are exercised in tests/writers and by the command tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from foundry.core.protocols import ProposalRequest
from foundry.core.records import Candidate, Diagnosis, FailureKind, OperatorSpec, Stage, Timing, Verdict

SPEC = OperatorSpec(path="ops/toy.py", name="toy")


def gene_source(genes: dict[str, int]) -> str:
    body = ", ".join(f"{k}={v}" for k, v in sorted(genes.items()))
    return f"# toy candidate\nGENES = dict({body})\n"


def genes_of(source: str) -> dict[str, int]:
    line = source.splitlines()[1]
    inner = line.removeprefix("GENES = dict(").removesuffix(")")
    return {k: int(v) for k, v in (part.split("=") for part in inner.split(", ") if part)}


class GeneWriter:
    """Proposes a child of the parent with one gene (`x`) moved by a seeded step; gen-0 starts at 1."""

    def __init__(self, name: str = "genes") -> None:
        self.name = name
        self.requests: list[ProposalRequest] = []

    def propose(self, request: ProposalRequest) -> Sequence[Candidate]:
        self.requests.append(request)
        base = genes_of(request.parent.source) if request.parent else {"x": 1, "island": request.island}
        out = []
        for n in range(request.count):
            step = (request.seed >> (4 * n)) % 7 - 2  # deterministic given the request's seed
            genes = dict(base, x=base["x"] + step, island=request.island)
            out.append(
                Candidate(
                    id=f"{self.name}-i{request.island}-g{request.generation}-{n}",
                    source=gene_source(genes) + f"# from {request.seed % 1000}\n",
                    writer=self.name,
                    genes=dict(genes),
                )
            )
        return out


class MeteredWriter(GeneWriter):
    """Spends a fixed number of 'tokens' per proposal, like an LLM writer."""

    def __init__(self, per_call: int) -> None:
        super().__init__("metered")
        self.per_call = per_call
        self.spent = 0

    @property
    def tokens_used(self) -> int:
        return self.spent

    def propose(self, request: ProposalRequest) -> Sequence[Candidate]:
        self.spent += self.per_call
        return super().propose(request)


class RaisingWriter:
    name = "raising"

    def propose(self, request: ProposalRequest) -> Sequence[Candidate]:
        raise RuntimeError("the writer broke")


class ConstantWriter:
    """Always proposes the same source: everything after the first is a duplicate."""

    name = "constant"

    def propose(self, request: ProposalRequest) -> Sequence[Candidate]:
        return [Candidate(id="same", source=gene_source({"x": 3}), genes={"x": 3})]


class GeneEvaluator:
    """Verified when x > 0 and the rule allows the island; speedup = x / 2 when timing is 'measured'."""

    def __init__(
        self,
        measured: bool = True,
        reject: Callable[[dict[str, int]], FailureKind | None] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.timing_available = measured
        self.reject = reject
        self.delay_s = delay_s
        self.calls: list[str] = []
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()

    def evaluate(self, candidate: Candidate) -> Verdict:
        with self.lock:
            self.calls.append(candidate.id)
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            if self.delay_s:
                time.sleep(self.delay_s)
            genes = genes_of(candidate.source)
            kind = self.reject(genes) if self.reject else None
            if kind is None and genes["x"] <= 0:
                kind = FailureKind.MISMATCH
            if kind is not None:
                return Verdict(
                    candidate_id=candidate.id,
                    verified=False,
                    policy="strict",
                    device="toy",
                    diagnoses=(Diagnosis(stage=Stage.CORRECTNESS, kind=kind, message=f"x={genes['x']}"),),
                )
            timing = (
                Timing(measured=True, candidate_ms=2.0 / genes["x"], eager_ms=1.0)
                if self.timing_available
                else Timing(measured=False, reason="no GPU")
            )
            return Verdict(
                candidate_id=candidate.id,
                verified=True,
                policy="strict",
                device="toy",
                timing=timing,
                triton_launches=1,
                trials=1,
            )
        finally:
            with self.lock:
                self.active -= 1


class FakeClock:
    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now
