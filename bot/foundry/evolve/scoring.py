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

import math
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
SMALL_TILE = 1024  # elements per program; smaller tiles waste memory transactions and launch more programs
TILE_PENALTY = 0.05  # per halving below SMALL_TILE
THREAD_ELEMENTS = (4, 128)  # elements per thread: fewer leaves lanes idle, more risks spills
THREAD_PENALTY = 0.05  # per halving below / doubling above that range
WARP = 32
DEFAULT_WARPS = 4
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
    cost += launch_shape_cost(candidate.genes)
    return cost


def launch_shape_cost(genes: dict[str, int | float | str | bool]) -> float:
    """Cost of the launch shape genes, per kernel kind (genes may be namespaced: row.BLOCK_N).
    The tile of a kind is the product of its BLOCK_* genes (reduction depths *_K left out);
    its threads are num_warps × 32."""
    tiles: dict[str, int] = {}
    warps: dict[str, int] = {}
    for name, value in genes.items():
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            continue
        kind, _, short = name.rpartition(".")
        if short.upper().startswith("BLOCK") and not short.upper().endswith("_K"):
            tiles[kind] = tiles.get(kind, 1) * value
        elif short == "num_warps":
            warps[kind] = value
    cost = 0.0
    for kind, tile in tiles.items():
        if tile < SMALL_TILE:
            cost += TILE_PENALTY * math.log2(SMALL_TILE / tile)
        per_thread = tile / (WARP * warps.get(kind, DEFAULT_WARPS))
        low, high = THREAD_ELEMENTS
        if per_thread < low:
            cost += THREAD_PENALTY * math.log2(low / per_thread)
        elif per_thread > high:
            cost += THREAD_PENALTY * math.log2(per_thread / high)
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
