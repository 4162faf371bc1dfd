"""Selection score of an evaluated candidate.

Verified candidates are ranked by measured speedup over eager when the evaluator timed them. Without
a GPU nothing is timed, and a static cost model ranks them instead, from compile facts (registers,
spills, shared memory of each kernel), the number of Triton launches per call, library ops left
outside Triton, and launch genes. The static score is a relative estimate, never a speedup, and the
report must say that timing was not measured.

Failed candidates get a fitness below every verified one, higher the further their failure got
through the evaluation stages: a lineage that reaches the correctness check is a better parent to
repair than one that does not compile.
"""

from __future__ import annotations

from dataclasses import dataclass

from foundry.core.records import Candidate, Stage, Verdict

# Stages in evaluation order; a failure later in the list came closer to a verified kernel.
STAGE_PROGRESS = (
    Stage.WRITER,
    Stage.STATIC,
    Stage.LOAD,
    Stage.COMPILE,
    Stage.RUN,
    Stage.CORRECTNESS,
    Stage.RUNTIME_GUARD,
    Stage.TIMING,
)

# Static cost model constants (relative units; one launch of a well-formed kernel costs 1.0).
LAUNCH_COST = 1.0  # every kernel launch reads and writes memory once more
LIBRARY_OP_COST = 0.5  # a library op outside Triton (hybrid policy) is an extra pass
SPILL_PENALTY = 0.5  # any spill costs half a launch, plus more per spilled register
SPILL_PER_REGISTER = 1.0 / 64
REGISTER_BUDGET = 128  # registers per thread above which occupancy drops
REGISTER_PENALTY = 1.0 / 256  # per register over budget
SHARED_SOFT_LIMIT = 96 * 1024  # bytes; above this fewer programs fit on a multiprocessor
SHARED_PENALTY = 0.1
SMALL_BLOCK = 128  # elements; smaller blocks waste memory transactions and launch more programs
SMALL_BLOCK_PENALTY = 1.0 / 512  # per element below SMALL_BLOCK, per block gene
UNMEASURED_DISCOUNT = 1e-3  # a verified but untimed candidate on a GPU ranks below every timed one


@dataclass(frozen=True)
class Score:
    value: float  # higher is better
    measured: bool  # True: speedup over eager from real timing; False: static cost model

    def label(self) -> str:
        return f"{self.value:.2f}x" if self.measured else f"{self.value:.3f} (est.)"


def static_cost(candidate: Candidate, verdict: Verdict) -> float:
    """Estimated relative cost of one forward call (lower is better)."""
    # triton_launches counts every call the evaluator made (trials and state checks); the number of
    # calls is the same for every candidate of an operator, so per-trial launches rank fairly.
    cost = LAUNCH_COST * max(verdict.triton_launches, 1) / max(verdict.trials, 1)
    cost += LIBRARY_OP_COST * len(verdict.library_ops)
    for kernel in verdict.kernels:
        if kernel.spills:
            cost += SPILL_PENALTY + SPILL_PER_REGISTER * kernel.spills
        if kernel.registers and kernel.registers > REGISTER_BUDGET:
            cost += REGISTER_PENALTY * (kernel.registers - REGISTER_BUDGET)
        if kernel.shared_bytes and kernel.shared_bytes > SHARED_SOFT_LIMIT:
            cost += SHARED_PENALTY
    for name, value in candidate.genes.items():
        short = name.rsplit(".", 1)[-1]  # genes may be namespaced by kernel kind: row.BLOCK_N
        if short.upper().startswith("BLOCK") and isinstance(value, int) and not isinstance(value, bool):
            if 0 < value < SMALL_BLOCK:
                cost += SMALL_BLOCK_PENALTY * (SMALL_BLOCK - value)
    return cost


def score(candidate: Candidate, verdict: Verdict, expect_timing: bool = False) -> Score | None:
    """The selection score of a verified candidate; None for a failed one. When timing was expected
    (a GPU is there) but this verdict has none, the static estimate is discounted below every
    measured speedup, so the two scales never compete."""
    if not verdict.verified:
        return None
    timing = verdict.timing
    if timing is not None and timing.measured and timing.speedup_eager is not None:
        return Score(value=timing.speedup_eager, measured=True)
    estimate = 1.0 / static_cost(candidate, verdict)
    if expect_timing:
        estimate *= UNMEASURED_DISCOUNT
    return Score(value=estimate, measured=False)


def fitness(candidate: Candidate, verdict: Verdict, expect_timing: bool = False) -> float:
    """Tournament fitness: the score for verified candidates; negative, by stage reached, for failures."""
    result = score(candidate, verdict, expect_timing)
    if result is not None:
        return result.value
    failure = verdict.failure
    if failure is None or failure.stage not in STAGE_PROGRESS:
        return -float(len(STAGE_PROGRESS) + 1)
    return -float(len(STAGE_PROGRESS) - STAGE_PROGRESS.index(failure.stage))
