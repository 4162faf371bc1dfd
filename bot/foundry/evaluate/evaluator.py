"""The trust core's conductor: static guard → isolated run → correctness → runtime guard → timing.

Each stage runs only if the previous passed; every failure becomes a Diagnosis in the Verdict.
Reference outputs, seeds and the comparison stay in this process; the candidate runs in a child.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import itertools
import json
import logging
import math
import os
import re
import secrets
import shutil
import statistics
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from foundry.core.records import (
    Candidate,
    Diagnosis,
    FailureKind,
    KernelFacts,
    PeakMemory,
    Stage,
    Timing,
    TimingRun,
    TrainingTiming,
    Verdict,
)
from foundry.evaluate import exchange, gradients, init_state, jobfiles, landlock
from foundry.evaluate.correctness import (
    Selection,
    Tolerance,
    compare,
    compare_output,
    probe,
    significant,
    strengthened,
    unusable,
)
from foundry.evaluate.device_lock import Admission, DeviceGate, DeviceLock, gpu_lock_path
from foundry.evaluate.isolation import (
    ChildOutcome,
    WarmPool,
    child_environment,
    describe_signal,
    run_child,
    scrub,
)
from foundry.evaluate.runtime_guard import describe_violations, flagged, op_identity, op_work, rule_name
from foundry.evaluate.static_guard import StaticGuard
from foundry.evaluate.worker import reset_build
from foundry.rules.loader import Rules, load_rules
from foundry.spec.loader import LoadedOperator, at_full_rank

log = logging.getLogger(__name__)

POLICIES = ("strict", "hybrid")
REVERIFY_TRIAL_FACTOR = 2
REVERIFY_TIMING_TRIALS = 200
REVERIFY_RUNS = 3  # timing runs of a finalist on a GPU (odd: the median is one run's time)
GPU_SEARCH_CONCURRENCY = 4  # candidates in flight per GPU during a search (`--workers`)
NOT_MEASURED = "not measured: no CUDA device (candidates ran under the Triton interpreter); timing needs a GPU"
# Transformed trials (CandidateEvaluator.transformed): inputs scaled by LARGE, WIDER and SMALL (each moved by a secret
# fraction of a decade within its band), and offset by OFFSET times their mean magnitude.
LARGE = 1e3
WIDER = 16.0  # a wider range than the draw's, short of saturating: a softmax's tail spans 1e-30 and below
SMALL = 1e-3
# Under a class with fp32's exponent range (tf32, bf16), inputs past fp16's largest finite value and below its
# smallest normal one: fp16 has TF32's mantissa, and only its range tells a kernel that casts to it apart.
BEYOND_HALF = (1e5, 1e-6)
OFFSET = 3.0
# A trial whose rows (along the last dimension) each have their own size, log-uniform within ROWS_APART decades of
# the draw's either way, and their own tails: activations whose per-token norms and outliers differ, as real ones do.
ROWS_APART = 1.5
ROWS_TAIL = 1.5  # and each element times exp(t * z), z standard normal, t secret per row below ROWS_TAIL: heavy tails
ROWS_APART_INPUTS = 2  # such a trial for each of the first two floating inputs
ROWS_APART_NOTE = "rows of input "
# Resized variants (CandidateEvaluator.resized_variants): dimensions of one size set apart, grown to 2n+1 up to
# RESIZE_GROW (past a tile of the declared size) and shrunk by one above; at most RESIZE_VARIANTS of them; the groups
# of a size shared by more than RESIZE_SAME_MAX dimensions are not searched (the dimension alone, or all of them).
RESIZE_GROW = 32
RESIZE_VARIANTS = 4
RESIZE_SAME_MAX = 5
RESIZE_RUNS = 96  # reference runs the search may spend
# A far offset: inputs moved by OFFSET_FAR times their spread (standard deviation), so that the mean is large
# against the spread (a DC offset, a residual stream that grew): a one-pass variance E[x^2] - E[x]^2 cancels.
OFFSET_FAR = 100.0
OFFSET_FARTHER = 1e4  # under a tf32/fp16/bf16 class, a second one
# Transformed trials are judged with a per-element rounding slack: SLACK_ULPS units of the output dtype's epsilon
# times the reference's output on the inputs' absolute values (a sum's rounding scales with the sum of its terms'
# magnitudes, not with the result: cancellation).
IGNORED_LABEL = -100  # the default ignore_index of torch's classification losses
SLACK_ULPS = 32.0
# ... and at least NOISE_FACTOR times the reference's own distance from fp64 (reference_noise).
NOISE_FACTOR = 4.0
# An element is judged by the significance rule only where the fp64 computation is steady: its inputs and state
# moved by JITTER_ULPS epsilons of their own dtype (a sign drawn per element, JITTER_DRAWS draws) move it by at most
# STEADY_RTOL of itself. Where they move it more (a LayerNorm of a nearly constant row: x - mean is a few ulps of
# x), any fp32 order of operations lands elsewhere, and a reference that matched fp64 did so by chance.
JITTER_ULPS = 4.0
JITTER_DRAWS = 2
STEADY_RTOL = 1.0 / 16
# A gradient call's slack is also NOISE_FACTOR times how far its fp64 gradients move (the larger of JITTER_DRAWS
# draws) when inputs, parameters, buffers and upstream values (jittered()) and every op's result (Jostled) move by
# JOSTLE_ULPS epsilons of the gradients' dtype: one rounding each. Not of a tf32/fp16/bf16 class's: such a class
# rounds its products' operands only, and the class reference (class_call) holds that rounding already
JOSTLE_ULPS = 1.0
# The rounding unit of a precision class's arithmetic where it is coarser than its outputs' dtype (epsilon)
PRECISION_EPS = {"tf32": 2.0**-10, "fp16": 2.0**-10, "bf16": 2.0**-7}
# Under such a class every trial's element may also differ from the reference by CLASS_NOISE_FACTOR times the
# class reference's distance from it: the reference run again with the operands of each matrix product and
# convolution rounded to the class (ClassRounding), as a TF32 tl.dot rounds them. An honest kernel lands next to
# the class reference, through whatever follows the product (a softmax, a norm); near-zero results of long
# cancelling sums lie far outside atol + rtol * |ref| (a 512-long TF32 dot's rounding is about 1e-2), and a
# coarser format than the class (bf16 operands under tf32) lands several times farther.
CLASS_NOISE_FACTOR = 2.0
# Ops whose NaN handling differs between torch and Triton (torch's relu/max/clamp keep a NaN, Triton's
# tl.maximum/minimum drop it on a GPU): an operator whose reference runs one gets no NaN/+inf trial, since an
# honest kernel's finite answer there cannot be told from a laundered one.
NAN_AMBIGUOUS = frozenset(
    {
        "relu",
        "relu_",
        "relu6",
        "clamp",
        "clamp_",
        "clamp_min",
        "clamp_max",
        "maximum",
        "minimum",
        "fmax",
        "fmin",
        "max",
        "min",
        "amax",
        "amin",
        "hardtanh",
        "hardtanh_",
        "threshold",
        "where",
        "hardswish",
        "hardsigmoid",
        "leaky_relu",
        "elu",
        "max_pool2d_with_indices",
        "max_pool1d",
        "max_pool2d",
        "max_pool3d",
        "max_pool3d_with_indices",
        "adaptive_max_pool2d",
        "cummax",
        "cummin",
        "sort",
        "topk",
        "argmax",
        "argmin",
    }
)
# Ops whose derivative has a kink or a tie (relu at 0, max over equal values, abs, a sort): on degenerate inputs
# (zero rows, zero features) honest backwards pick different subgradients, so only their finiteness is judged
KINKED = NAN_AMBIGUOUS | frozenset(
    {"abs", "sign", "sgn", "median", "sort", "topk", "argmax", "argmin", "cummax", "cummin", "kthvalue", "norm"}
    | {"linalg_vector_norm"}
)
# The wide edge variant (stateless operators): the last dimension past every declared width, at least WIDE_MIN.
WIDE_MIN = 2048
# Edge variants (CandidateEvaluator.edge_variants): a batch past EDGE_ROWS rows, while its inputs stay under
# EDGE_ELEMENTS elements on the interpreter (64 times that on a GPU).
EDGE_ROWS = 600
ALIGNED_ROWS = 64  # and a batch whose rows are a multiple of this many
EDGE_ELEMENTS = 1 << 17
# Declared shape variants a training operator's gradients are also checked on (gradient_calls).
GRADIENT_VARIANTS = 3
GRADIENT_CALLS_MIN = 8  # at least: every upstream layout once, and two dense: frozen inputs, frozen parameters
# The reweighted call's parameters (redraw_): scaled by these, with signs flipped at random.
REDRAW_LARGE = 10.0
REDRAW_SMALL = 0.01


@dataclass
class EvaluatorConfig:
    trials: int | None = None  # correctness trials with fresh seeds; default from rules/tolerance.yaml
    timeout_s: float | None = None  # per candidate; default 600 on CPU (interpreter), 180 on GPU
    memory_mb: int | None = 12288  # address-space cap of a CPU-only child
    gpu_memory_fraction: float = 0.85
    timing_trials: int = 50
    timing_warmup: int = 5
    timing_rotate: int = 4
    workdir: Path | None = None
    keep_jobs: bool = False
    perturbation: float = 0.1  # relative noise added to the reference's parameters
    # Only tests of the isolation layer switch this off, to reach the child with code the guard refuses.
    static_guard: bool = True
    # Without a GPU: compile launched kernels for sm_90 on the CPU (registers, spills, shared memory).
    static_compile: bool = False
    # Start the next worker while the current candidate runs (saves the imports on every candidate).
    warm_pool: bool = False
    # On a GPU: candidates whose correctness runs share the device at once (timing is always alone); each
    # child's memory cap is its share. The search takes several (GPU_SEARCH_CONCURRENCY); a check, one.
    gpu_concurrency: int = 1
    # Default-shape trials the kernel is called on again after its timing run (results must not drift with
    # the call count); the device is held alone meanwhile, so a search checks one, the final check all.
    after_timing_trials: int = 1
    # On a GPU: trial inputs and outputs stay on the device, shared with the worker (evaluate/exchange.py),
    # instead of going through the job files on the host.
    device_exchange: bool = True
    # Candidate processes confine themselves with Landlock (evaluate/landlock.py): writes only beneath their
    # job directory and Triton's cache, no TCP. On a GPU the worker opens the device first (the driver's
    # first call fails under it); the whole GPU suite passed confined on the H200 (2026-12-04).
    file_sandbox: bool = True
    # On the CPU the worker may start no process (seccomp: no fork, vfork or exec; clone only for threads): the
    # interpreter needs no compiler. Off only where a test reaches the reaper behind it (a GPU worker may start
    # processes: Triton's toolchain runs ptxas).
    process_sandbox: bool = True


@dataclass
class Prepared:
    """One candidate's secret side of a job: what the worker gets (payload, and on a GPU the shared device
    buffers) and what its outputs are judged against."""

    payload: dict[str, Any]  # job.pt: init arguments and the perturbed state (what building the candidate needs)
    refs: list[list[torch.Tensor]]  # reference outputs per trial, on the evaluator's device
    model: nn.Module
    containers: list[str]  # the reference's output container per trial
    first: list[Any]  # trial 0's inputs: to time the reference (meta tensors once it has been timed)
    shared: exchange.Shared | None = None
    calls: list[list[torch.Tensor]] = field(default_factory=list)  # output buffers per call of the plan
    after: list[list[torch.Tensor]] = field(default_factory=list)  # per call after the timing run
    descriptors: dict[str, Any] = field(default_factory=dict)  # job.json's "exchange"
    # trials.pt, written once the candidate is built: trial inputs (None where shared) and, where the plan ends
    # with a reweighted call, the state its reference ran with
    sent: dict[str, Any] = field(default_factory=dict)
    described: list[list[dict[str, Any]]] = field(default_factory=list)  # job.json's "inputs": shapes only
    notes: list[str] = field(default_factory=list)  # per trial, how its inputs were made ("" for plain ones)
    tolerances: dict[int, list[Tolerance]] = field(default_factory=dict)  # trials judged with their own
    # per trial, each output's rounding slack under a class coarser than its dtype (CandidateEvaluator.class_slack)
    class_slacks: dict[int, list[torch.Tensor | None]] = field(default_factory=dict)
    reweighted: bool = False  # the last trial runs after the parameters are changed in place
    modes: dict[str, bool] = field(default_factory=dict)  # use_modes: train mode, inputs that require grad
    work: list[dict[str, int]] = field(default_factory=list)  # per trial, the reference's work per op (op_work)
    # per trial, the outputs that are the indices of an unstable sort or topk: judged by the values they select
    selections: list[dict[int, Selection]] = field(default_factory=list)
    # a training operator's gradient calls (reference_gradients): trial, seed, names, reference grads, tolerances
    gradients: list[dict[str, Any]] = field(default_factory=list)
    # one more gradient call (trial 0, a fresh upstream draw) run after the timed training steps (timing only)
    after_gradient: dict[str, Any] | None = None

    def held_bytes(self) -> int:
        refs = sum(t.numel() * t.element_size() for r in self.refs for t in r)
        return refs + (self.shared.nbytes if self.shared is not None else 0)

    def close(self) -> None:
        """Free the shared buffers: only once the worker is gone."""
        if self.shared is not None:
            self.shared.close()


@dataclass
class ReferenceTiming:
    eager_ms: float
    compile_ms: float | None
    flops: int
    bytes_moved: int
    notes: list[str] = field(default_factory=list)
    peak_bytes: dict[str, int] = field(default_factory=dict)  # "eager", "compile": a forward's peak memory
    train_ms: dict[str, float] = field(default_factory=dict)  # a training operator's step (forward + backward)
    train_peak_bytes: dict[str, int] = field(default_factory=dict)


GRADIENT_SPEC = (  # what the worker needs of a gradient call (the reference's answers stay here)
    "trial",
    "seed",
    "reweighted",
    "layout",
    "frozen",
    "nonleaf",
    "train",
    "buffer_names",
    "scale",
    "spread",
    "frozen_params",
    "finite",
    "again",
    "second",
    "wanted",
    "holes",
    "accumulate",
    "constant",
    "second_layout",
    "mask",
    "modify",
    "unused",
    "quiet",
    "degenerate",
)


SHM = Path("/dev/shm")
SHM_MIN_FREE = 8 * 1024**3  # inputs of memory-bound operators are hundreds of MB per trial


def job_root() -> str | None:
    """Jobs carry the trial inputs between processes: keep them in memory (/dev/shm) when it has room."""
    try:
        stats = os.statvfs(SHM)
    except OSError:
        return None
    free = stats.f_bavail * stats.f_frsize
    return str(SHM) if free >= SHM_MIN_FREE and os.access(SHM, os.W_OK) else None


def perturb_(model: nn.Module, scale: float, generator: torch.Generator) -> None:
    """Move parameters and float buffers away from their initial values (multiplicatively, so
    positive statistics stay positive; all-zero tensors get a small additive nudge)."""
    with torch.no_grad():
        for tensor in list(model.parameters()) + list(model.buffers()):
            if not tensor.is_floating_point() or tensor.numel() == 0:
                continue
            noise = torch.randn(tensor.shape, generator=generator, dtype=torch.float32).to(tensor.device, tensor.dtype)
            if bool((tensor == 0).all()):
                tensor.add_(noise * scale * 0.1)
            else:
                tensor.mul_(1 + scale * noise)


def redraw_(model: nn.Module, generator: torch.Generator) -> None:
    """Draw the parameters from another distribution than their initialisation: every other floating
    parameter scaled by REDRAW_LARGE, the rest by REDRAW_SMALL, each element's sign flipped at random (trained
    or loaded weights leave the init range; a kernel may not depend on it). Buffers (running statistics) keep
    their values."""
    with torch.no_grad():
        floating = [p for p in model.parameters() if p.is_floating_point() and p.numel() > 0]
        for k, tensor in enumerate(floating):
            flips = torch.randint(0, 2, tensor.shape, generator=generator).to(tensor.device, tensor.dtype) * 2 - 1
            tensor.mul_(flips * (REDRAW_LARGE if k % 2 == 0 else REDRAW_SMALL))


def log_stages(candidate_id: str, marks: dict[str, float], child: list[Any] | None = None) -> None:
    """Where an evaluation's time went (debug log): waits for the device, reference outputs, the child's
    correctness run (and within it, as the child reported them, its stages), judging, the wait for
    exclusive use and the timing run."""
    names = list(marks)
    spans = [f"{b} {marks[b] - marks[a]:.2f}s" for a, b in zip(names, names[1:], strict=False)]
    inside = f" (child: {', '.join(f'{n} {s:.2f}s' for n, s in child)})" if child else ""
    log.debug("%s: %s%s", candidate_id, ", ".join(spans), inside)


SLOW_COMPILE_S = 20.0  # a worker's compile ahead this long is logged with the candidate's genes


def slow_compile(child: list[tuple[str, float]]) -> float | None:
    """Seconds the worker spent compiling ahead, where that was SLOW_COMPILE_S or more: a search's generation
    waits for its slowest candidate (on the H200 one group-norm candidate's 64-68 s compile held up a
    generation of 8 whose other candidates took 24 s in all)."""
    seconds = sum(s for name, s in child if name == "compiled ahead")
    return seconds if seconds >= SLOW_COMPILE_S else None


def memory_share(fraction: float, concurrency: int, held_bytes: int, total_bytes: int) -> float:
    """A worker's cap when `concurrency` candidates are in flight: the evaluator's `fraction` of the device,
    less what this process holds for each candidate meanwhile (its reference outputs, `held_bytes` for one),
    split among them. Not below a quarter of the even split: a worker that needs more runs out of memory,
    and a candidate that ran out of memory beside others is evaluated again alone, with all of `fraction`."""
    even = fraction / concurrency
    return max(even - held_bytes / total_bytes, even / 4)


def child_marks(raw: Any) -> list[tuple[str, float]]:
    """The child's stage timings, for the debug log only; whatever else the child sent is dropped."""
    if not isinstance(raw, list):
        return []
    return [
        (str(m[0])[:40], float(m[1]))
        for m in raw[:32]
        if isinstance(m, (list, tuple)) and len(m) == 2 and isinstance(m[1], (int, float))
    ]


def physical_gpu(index: int) -> str:
    """The CUDA_VISIBLE_DEVICES entry of this process's GPU `index`, for a child that must see only it."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        entries = [e.strip() for e in visible.split(",") if e.strip()]
        if index < len(entries):
            return entries[index]
    return str(index)


def propagates(outputs: list[torch.Tensor], inputs: list[Any]) -> bool:
    """Whether the reference's outputs on inputs holding NaN/+inf entries judge a trial: every floating output
    holds some non-finite values, more of them than the inputs hold (the reference spreads them, as a reduction, a
    normalization or a product does: a kernel that drops or clamps them launders a diverging value into plausible
    numbers), and some finite ones (not all of it is lost). An elementwise operator, which keeps each entry to
    itself, gives no such trial (max(NaN, 0) differs between devices)."""
    injected = sum(
        int((~torch.isfinite(x)).sum()) for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()
    )
    floating = [t for t in outputs if t.is_floating_point()]
    if not floating or injected == 0:
        return False
    for t in floating:
        bad = int((~torch.isfinite(t)).sum())
        if bad <= injected or bad >= t.numel():
            return False
    return True


def nudged(t: torch.Tensor, unit: float, generator: torch.Generator) -> torch.Tensor:
    """`t` with each element moved by `unit` of itself, up or down, the sign drawn from `generator` (on its device)."""
    sign = torch.randint(0, 2, t.shape, generator=generator, device=generator.device)
    return t * (1 + unit * (sign.to(device=t.device, dtype=t.dtype) * 2 - 1))


def jittered(model: nn.Module, inputs: list[Any], seed: int, unit: float) -> list[Any]:
    """An fp64 `model`'s floating parameters and buffers, in place, and `inputs` (returned) with each element moved
    by `unit` of itself, its sign drawn from `seed`; and the model's floating outputs too from now on (its forward
    replaced on the instance): a loss sum(y * g) of the moved outputs is the loss of the outputs with the upstream
    gradients g moved, so the gradients are those of a moved upstream draw as well."""
    generator = torch.Generator().manual_seed(seed)

    def moved(t: torch.Tensor) -> torch.Tensor:
        return nudged(t, unit, generator)

    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(moved(t))
    original = model.forward

    def forward(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        if isinstance(out, (tuple, list)):
            return type(out)(moved(o) if isinstance(o, torch.Tensor) and o.is_floating_point() else o for o in out)
        return moved(out) if isinstance(out, torch.Tensor) and out.is_floating_point() else out

    model.forward = forward  # type: ignore[method-assign]
    return [moved(x) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]


def per_output(
    refs: list[torch.Tensor], out: Any, fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
) -> list[torch.Tensor | None]:
    """fn(output, reference) for each floating reference output that another run's `out` matches in shape; None
    for the others."""
    outs = as_outputs(out)
    found: list[torch.Tensor | None] = []
    for k, r in enumerate(refs):
        o = outs[k] if k < len(outs) else None
        usable = isinstance(o, torch.Tensor) and r.is_floating_point() and o.shape == r.shape
        found.append(fn(o, r) if usable else None)
    return found


def with_slacks(tolerances: list[Tolerance], slacks: list[torch.Tensor | None]) -> list[Tolerance]:
    """Each output's tolerance with a per-element slack added (the larger where it has one already)."""
    judged = []
    for k, tol in enumerate(tolerances):
        extra = slacks[k] if k < len(slacks) else None
        if extra is not None and tol.slack is not None and tol.slack.shape == extra.shape:
            extra = torch.maximum(tol.slack.to(extra.device), extra)
        judged.append(tol if extra is None else dataclasses.replace(tol, slack=extra))
    return judged


def frozen_copy(model: nn.Module, frozen: tuple[str, ...] | list[str] = ()) -> nn.Module:
    """A copy of the model whose parameters named in `frozen` do not require grad."""
    copied = copy.deepcopy(model)
    for name, p in copied.named_parameters():
        if name in frozen:
            p.requires_grad_(False)
    return copied


def trial_dtype(inputs: list[Any]) -> torch.dtype:
    return next((t.dtype for t in inputs if isinstance(t, torch.Tensor) and t.is_floating_point()), torch.float32)


@functools.cache
def no_sandbox_warning() -> None:
    log.warning("no Landlock on this system: candidate processes can write every file this user can")


def total_memory(device_index: int | None) -> int:
    return torch.cuda.get_device_properties(device_index or 0).total_memory


def escaped_stream(what: str, found: list[str], stage: Stage = Stage.RUNTIME_GUARD) -> Diagnosis:
    """Work the candidate put on a stream other than the one it was called on: the timed stream's events
    do not see it (the runtime guard's record of each launch's and each aten op's stream)."""
    return Diagnosis(
        stage=stage,
        kind=FailureKind.TIMING_ANOMALY,
        rule="work_escapes_stream",
        message=f"{what}: work went to another CUDA stream than the caller's, out of the timed stream's sight: "
        + "; ".join(found[:3]),
    )


def median_run(verdicts: list[Verdict]) -> Verdict:
    """One verdict for several verified runs of a candidate: the run with the median candidate time (its
    checks, kernels and roofline), eager and torch.compile the medians of their own runs, every run's times
    kept in `timing.runs`, the wall times summed. A single run, or runs without measured times, are returned
    as the first run."""
    timings = [v.timing for v in verdicts]
    if len(verdicts) < 2 or not all(t is not None and t.measured and t.candidate_ms for t in timings):
        return verdicts[0]
    runs = tuple(
        TimingRun(candidate_ms=t.candidate_ms, eager_ms=t.eager_ms, compile_ms=t.compile_ms)
        for t in timings
        if t is not None and t.candidate_ms is not None
    )
    middle = sorted(range(len(verdicts)), key=lambda i: runs[i].candidate_ms)[(len(verdicts) - 1) // 2]
    base, timing = verdicts[middle], timings[middle]
    assert timing is not None

    def median(values: list[float | None]) -> float | None:
        known = sorted(v for v in values if v is not None)
        return statistics.median(known) if known else None

    timing = timing.model_copy(
        update={
            "eager_ms": median([r.eager_ms for r in runs]),
            "compile_ms": median([r.compile_ms for r in runs]),
            "runs": runs,
        }
    )
    return base.model_copy(update={"timing": timing, "wall_s": sum(v.wall_s for v in verdicts)})


def first_order(expected: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """A double-backward call's expectations cut to the first-order gradients the worker handed back (a double
    backward refused or detached: the gradients built under create_graph, before the second order)."""
    first = len(call.get("names") or [])
    return expected | {key: expected[key][:first] for key in ("names", "refs", "tolerances")}


def peak_memory(candidate: Any, reference: dict[str, int]) -> PeakMemory:
    """Peak memory in MiB: the candidate's as its worker reported it (a number, or nothing), the reference's."""

    def mib(n: Any) -> float | None:
        return round(n / 2**20, 3) if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None

    return PeakMemory(
        candidate_mib=mib(candidate), eager_mib=mib(reference.get("eager")), compile_mib=mib(reference.get("compile"))
    )


def mode_name(flags: Any) -> str:
    """A sorted list of a module tree's distinct training flags, in words."""
    return {(False,): "eval mode", (True,): "train mode"}.get(
        tuple(flags) if isinstance(flags, list) else (), "mixed modes"
    )


def to_device(values: list[Any], device: str) -> list[Any]:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def tensors_to(value: Any, device: str) -> Any:
    """`value` with every tensor in it on `device`: through dicts, lists, tuples and dataclasses (Tolerance)."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: tensors_to(v, device) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(tensors_to(v, device) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: tensors_to(getattr(value, f.name), device) for f in dataclasses.fields(value)}
        return dataclasses.replace(value, **changed)
    return value


def delivered(flags: Any, buffers: list[list[torch.Tensor]], count: int) -> list[list[torch.Tensor] | None]:
    """Per call, the shared buffers the worker says it delivered that call's outputs to (they start poisoned:
    a claim without the copy fails), or None: the outputs are in its outputs file."""
    flags = flags if isinstance(flags, list) else []
    return [buffers[c] if c < len(buffers) and c < len(flags) and flags[c] is True else None for c in range(count)]


def as_outputs(out: Any) -> list[torch.Tensor]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def strided(x: torch.Tensor, family: str = "transposed") -> torch.Tensor:
    """x's values in a non-contiguous view, of a layout a layer is handed. `family` "transposed": the last two
    dimensions transposed in memory (`h.t()`) or, drawn (torch's generator) for 3-d and more, the first two swapped
    (a 3-d input used transposed); "split": rows inside a wider buffer past an offset, unit inner stride (one piece
    of a split or of a fused projection: `qkv[..., n:2n]`). Below 2-d, every other element of a buffer twice as long
    (a slice `[::2]`)."""
    if x.dim() >= 2 and x.shape[-1] > 1 and (x.shape[-2] > 1 or family == "split"):
        layout = family
        if family == "transposed" and x.dim() >= 3 and x.shape[0] > 1 and x.shape[1] > 1:
            layout = ("transposed", "permuted")[int(torch.randint(2, ()))]
    elif x.dim() >= 1 and x.shape[-1] > 1:
        layout = "every other"
    else:
        return x
    if layout == "transposed":
        view = torch.empty(*x.shape[:-2], x.shape[-1], x.shape[-2], dtype=x.dtype, device=x.device).transpose(-1, -2)
    elif layout == "split":
        n = x.shape[-1]
        view = torch.empty(*x.shape[:-1], 3 * n, dtype=x.dtype, device=x.device)[..., n : 2 * n]
    elif layout == "permuted":
        view = torch.empty(x.shape[1], x.shape[0], *x.shape[2:], dtype=x.dtype, device=x.device).transpose(0, 1)
    else:
        view = torch.empty(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype, device=x.device)[..., ::2]
    return view.copy_(x)


def math_attention() -> Any:
    """A context in which scaled_dot_product_attention runs its math form (plain products and a softmax) and
    nn.MultiheadAttention / TransformerEncoderLayer leave their fused fast path: ops the dispatch level sees one by
    one, with the NaN semantics of the formula."""
    stack = contextlib.ExitStack()
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel

        stack.enter_context(sdpa_kernel([SDPBackend.MATH]))
    except (ImportError, RuntimeError):  # a torch without the selector: its default backends
        pass
    mha = getattr(torch.backends, "mha", None)
    if mha is not None and hasattr(mha, "set_fastpath_enabled"):
        before = mha.get_fastpath_enabled()
        mha.set_fastpath_enabled(False)
        stack.callback(mha.set_fastpath_enabled, before)
    return stack


def tf32_rounded(x: torch.Tensor) -> torch.Tensor:
    """fp32 values rounded to TF32's 10 explicit mantissa bits (to nearest, ties away, as cvt.rna.tf32 and the
    interpreter's emulation round), infinities and NaN as they are."""
    bits = x.contiguous().view(torch.int32)
    special = (bits & 0x7F800000) == 0x7F800000
    rounded = ((bits.to(torch.int64) + 0x1000) & ~0x1FFF).to(torch.int32)  # no carry into the sign: int64 first
    return torch.where(special, bits, rounded).view(torch.float32).view(x.shape)


CLASS_ROUNDING: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tf32": tf32_rounded,
    "fp16": lambda x: x.to(torch.float16).to(torch.float32),
    "bf16": lambda x: x.to(torch.bfloat16).to(torch.float32),
}


FUSED_ATTENTION = frozenset(
    {
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_attention_math",  # one op at the dispatch level too
    }
)


class ClassRounding(TorchDispatchMode):
    """The operands of matrix products and convolutions (not their bias) rounded by `rounding` where they are fp32,
    as a precision class's tensor cores take them (a fused attention's output from its math form, whose products are
    rounded so); every other op as it is."""

    def __init__(self, rounding: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.rounding = rounding
        aten = torch.ops.aten
        self.operands = {aten.mm: (0, 1), aten.bmm: (0, 1), aten.addmm: (1, 2), aten.baddbmm: (1, 2)}
        self.operands |= {aten.convolution: (0, 1), aten.addbmm: (1, 2), aten.mv: (0, 1), aten.dot: (0, 1)}

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        packet = getattr(func, "overloadpacket", None)
        if getattr(packet, "__name__", "") in FUSED_ATTENTION:  # its two products, as the math form runs them
            bound = dict(zip([a.name for a in func._schema.arguments], args, strict=False)) | (kwargs or {})
            q, k, v = bound["query"], bound["key"], bound["value"]
            if not bound.get("dropout_p") and q.dtype == torch.float32 and q.shape[:-2] == k.shape[:-2]:
                fused = func(*args, **(kwargs or {}))
                r = self.rounding
                scale = bound.get("scale") or 1.0 / math.sqrt(q.shape[-1])
                scores = (r(q) @ r(k).transpose(-2, -1)) * scale
                mask = bound.get("attn_mask", bound.get("attn_bias"))
                if bound.get("is_causal"):
                    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
                if mask is not None:
                    scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
                return (r(torch.softmax(scores, dim=-1)) @ r(v), *fused[1:])
        at = self.operands.get(packet, ())
        if at:
            args = tuple(
                self.rounding(a) if k in at and isinstance(a, torch.Tensor) and a.dtype == torch.float32 else a
                for k, a in enumerate(args)
            )
        return func(*args, **(kwargs or {}))


def unstable_selection(func: Any, args: tuple, kwargs: dict[str, Any]) -> Selection | None:
    """What an unstable sort or a sorted topk sorts (its values on the host, and the dim), or None for any other op
    (a stable sort's order is defined: its indices are judged exactly)."""
    if func is torch.ops.aten.topk.default:
        params = dict(zip(("k", "dim", "largest", "sorted"), args[1:], strict=False)) | kwargs
        if not params.get("sorted", True):
            return None
        op = "topk"
    elif func is torch.ops.aten.sort.default:
        params = dict(zip(("dim", "descending"), args[1:], strict=False)) | kwargs
        op = "sort"
    elif func is torch.ops.aten.sort.stable:
        params = kwargs
        if params.get("stable"):
            return None
        op = "sort"
    else:
        return None
    source = args[0]
    if not isinstance(source, torch.Tensor):
        return None
    return Selection(source.detach().to("cpu", copy=True), int(params.get("dim", -1)), op)


class ReferenceOps(TorchDispatchMode):
    """The ops the reference runs, by their rules/runtime.yaml names (runtime_guard.rule_name: aten ops only),
    for the hybrid policy's grant."""

    def __init__(self, magnitudes: bool = False, selections: bool = False) -> None:
        super().__init__()
        self.select = selections  # also keep what each unstable sort sorted (Selection)
        self.ops: set[str] = set()
        self.counts: dict[str, int] = {}  # calls per op, by rule name
        self.work: dict[str, int] = {}  # runtime_guard.op_work per op, by rule name
        self.magnitudes = magnitudes  # also keep the largest finite magnitude of any floating result
        self.largest = 0.0
        self.selections: list[tuple[torch.Tensor, Selection]] = []  # indices of unstable sorts, with what they sorted

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        selection = unstable_selection(func, args, kwargs or {}) if self.select else None
        if selection is not None:
            self.selections.append((out[1], selection))
        if self.magnitudes:
            for t in out if isinstance(out, (tuple, list)) else [out]:
                if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel():
                    self.largest = max(self.largest, float(t.detach().abs().nan_to_num(0.0, 0.0, 0.0).max()))
        name = rule_name(flagged(op_identity(func), func, args, kwargs or {}, out))
        if name is not None:
            self.ops.add(name)
            self.counts[name] = self.counts.get(name, 0) + 1
            self.work[name] = self.work.get(name, 0) + op_work(func, args, kwargs or {}, out)
        return out


class Jostled(TorchDispatchMode):
    """Every new floating result of an aten op (not a view or an in-place result) moved by `unit` of itself, its
    sign drawn per element from `seed`: the rounding each op of an fp32 computation commits, played out in fp64
    (Monte Carlo arithmetic). The spread of results this gives is the rounding of this order of operations, forward
    and backward, intermediate values included (a batch mean far from zero rounded at its own size leaves the
    centred rows off-centre: input jitter alone leaves them centred)."""

    def __init__(self, seed: int, unit: float) -> None:
        super().__init__()
        self.seed, self.unit = seed, unit
        self.generators: dict[str, torch.Generator] = {}

    def moved(self, t: torch.Tensor, inputs: list[torch.Tensor]) -> torch.Tensor:
        if not (t.is_floating_point() and t.numel()) or any(t.untyped_storage().data_ptr() == p for p in inputs):
            return t  # integers, empty, a view or an in-place result: nothing rounded here
        key = str(t.device)
        if key not in self.generators:
            self.generators[key] = torch.Generator(device=t.device).manual_seed(self.seed)
        return nudged(t, self.unit, self.generators[key])

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        flat = [a for a in list(args) + list((kwargs or {}).values()) if isinstance(a, torch.Tensor)]
        flat += [t for a in args if isinstance(a, (tuple, list)) for t in a if isinstance(t, torch.Tensor)]
        storages = [t.untyped_storage().data_ptr() for t in flat]
        if isinstance(out, torch.Tensor):
            return self.moved(out, storages)
        if isinstance(out, (tuple, list)):
            return type(out)(self.moved(t, storages) if isinstance(t, torch.Tensor) else t for t in out)
        return out


class CandidateEvaluator:
    """Evaluates candidates for one operator. Thread-safe; on a GPU evaluations are serialized."""

    def __init__(
        self,
        operator: LoadedOperator,
        policy: str = "strict",
        config: EvaluatorConfig | None = None,
        rules: Rules | None = None,
        device: str | None = None,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
        self.operator = operator
        self.policy = policy
        self.config = config or EvaluatorConfig()
        self.rules = rules or load_rules()
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if self.device != "cpu" and not self.device.startswith("cuda"):
            raise ValueError(f"device must be cpu, cuda or cuda:N, got {self.device!r}")
        self.is_cuda = self.device.startswith("cuda")
        self.device_index = torch.device(self.device).index or 0 if self.is_cuda else None
        self.small = self.device == "cpu"
        self.guard = StaticGuard(self.rules.guard)
        base = self.rules.tolerance.for_precision(operator.spec.precision)
        self.tolerance = Tolerance(base.atol, base.rtol)
        self.reference_lock = threading.Lock()
        # Until the reference has run once (prepare_job), the grant holds no op of its own: see grant.
        self.reference_ops: frozenset[str] | None = None
        self.reference_counts: dict[str, int] = {}  # how often one reference call runs each op (ReferenceOps)
        self.last_work: dict[str, int] = {}  # the work per op of the last reference call (ReferenceOps.work)
        # what each unstable sort's indices of a reference run sorted, by the indices tensor (gone with it)
        self.selected: dict[int, tuple[weakref.ref[torch.Tensor], Selection]] = {}
        self.allowed_ops: frozenset[str] = frozenset()
        self.library_ops: frozenset[str] = frozenset()
        self.strict_ops: frozenset[str] = frozenset()
        self.grant(frozenset())
        self.reference_ops = None
        self.trials = self.config.trials or self.rules.tolerance.trials
        self.timeout_s = self.config.timeout_s or (600.0 if self.device == "cpu" else 180.0)
        self.concurrency = max(1, self.config.gpu_concurrency) if self.is_cuda else 1
        self.admission = Admission(self.concurrency)  # fewer in flight after running out of memory beside others
        # correctness runs share the GPU, a timing run has it alone (also against other processes)
        self.device_lock = DeviceLock(gpu_lock_path(self.device_index or 0) if self.is_cuda else None)
        self.reference_timing: ReferenceTiming | None = None
        self.warm: tuple[nn.Module, list[Any], Any, Exception | None] | None = None  # warm_reference
        self.probe_tolerances: list[Tolerance] | None = None
        self.probe_notes: list[str] = []
        self.probe_weak = False
        self.inputs_on_device = True
        self.exchanging = self.is_cuda and self.config.device_exchange
        # TF32 only where the operator's precision class tolerates it. cuDNN convolutions default to TF32
        # in PyTorch: for an fp32 operator the references, the eager and torch.compile timings and any
        # library convolution a hybrid candidate calls all run in full fp32, the accuracy candidates must
        # meet (process-wide; one operator per evaluator process at a time).
        self.tf32 = operator.spec.precision != "fp32"
        if self.is_cuda:
            torch.backends.cudnn.allow_tf32 = self.tf32
        self.env = child_environment({"TRITON_INTERPRET": "1"} if self.device == "cpu" else {})
        self.env.pop(landlock.ENV, None)
        if self.config.file_sandbox:
            if landlock.abi() >= 1:
                self.env[landlock.ENV] = "1"
            else:
                no_sandbox_warning()
        if self.device == "cpu":
            self.env.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            # the child sees only this evaluator's GPU, as its "cuda"
            self.env["CUDA_VISIBLE_DEVICES"] = physical_gpu(self.device_index or 0)
            self.env["FOUNDRY_WARM_DEVICE"] = "cuda"
        self.device_name = torch.cuda.get_device_name(self.device_index) if self.is_cuda else "cpu (Triton interpreter)"
        self.pool: WarmPool | None = None
        if self.config.warm_pool:
            self.pool = WarmPool(
                memory_mb=self.config.memory_mb if self.device == "cpu" else None,
                env=self.env,
                cwd=Path(tempfile.gettempdir()),
                # a generation takes `concurrency` at once: a second set is warm by the next one (on the H200
                # candidates waited ~4 s for workers still importing torch while generations took ~6 s)
                size=2 * self.concurrency if self.is_cuda else self.concurrency,
            )

    def reverify(self, candidate: Candidate) -> Verdict:
        """The final check of a search's best candidate: fresh seeds, REVERIFY_TRIAL_FACTOR× the correctness
        trials and a REVERIFY_TIMING_TRIALS-trial timing run, REVERIFY_RUNS times on a GPU (each in a worker
        process of its own, seconds apart): the number a pull request claims is a median that a re-run can be
        held to, and the report lists every run. (Before the timer kept the host's enqueue time out, the same
        group-norm kernel timed 0.08-0.12 ms from one run to the next; since, its runs agree within 0.2%.)
        The first run reuses this evaluator's reference timing; each later one times eager and torch.compile
        again on its own fresh inputs, so that the baselines are medians of as many runs. Every run must
        verify: the first that does not is the verdict."""
        runs = REVERIFY_RUNS if self.timing_available else 1
        trials = self.trials * REVERIFY_TRIAL_FACTOR
        config = dataclasses.replace(
            self.config,
            timing_trials=max(self.config.timing_trials, REVERIFY_TIMING_TRIALS),
            after_timing_trials=trials,
        )
        verdicts: list[Verdict] = []
        for i in range(runs):
            final = copy.copy(self)
            final.config, final.trials = config, trials
            if i:
                final.reference_timing, final.warm = None, None  # re-timed in this run, on its inputs
            verdict = final.evaluate(candidate)
            if not verdict.verified:
                return verdict
            verdicts.append(verdict)
        return median_run(verdicts)

    def close(self) -> None:
        """Stop the warm worker, if any. Safe to call twice."""
        if self.pool is not None:
            self.pool.close()

    def __enter__(self) -> CandidateEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def after_trials(self) -> int:
        return max(1, min(self.config.after_timing_trials, self.trials))

    @property
    def timing_available(self) -> bool:
        return self.is_cuda

    # -- public -----------------------------------------------------------------------------------

    def evaluate(self, candidate: Candidate) -> Verdict:
        started = time.monotonic()
        errors, warnings = self.guard.check(candidate.source) if self.config.static_guard else ([], [])
        if errors:
            return self.verdict(candidate, errors, warnings, started)
        with self.admission.slot() as admitted:
            try:
                verdict = self.run_isolated(candidate, warnings, started)
            except torch.cuda.OutOfMemoryError:
                # this process ran out of device memory preparing or judging, beside other candidates (or other
                # processes): no verdict on the candidate; once more with the device to itself
                log.info("out of device memory evaluating %s beside others; evaluating it alone", candidate.id)
                self.admission.shrink(admitted)
                torch.cuda.empty_cache()
                return self.run_isolated(candidate, warnings, time.monotonic(), alone=True)
            failure = verdict.failure
            if failure is not None and failure.kind is FailureKind.OOM and self.concurrency > 1:
                # It ran out of memory while sharing the GPU (and with a share of its memory cap): that is
                # no verdict on the candidate until it has had the device to itself.
                log.info("%s ran out of memory beside other candidates; evaluating it alone", candidate.id)
                verdict = self.run_isolated(candidate, warnings, time.monotonic(), alone=True)
                alone_failure = verdict.failure
                if alone_failure is None or alone_failure.kind is not FailureKind.OOM:
                    self.admission.shrink(admitted)  # it fits alone: the share was too small, not the candidate wrong
            return verdict

    # -- stages -----------------------------------------------------------------------------------

    def prepare(self) -> Prepared:
        """Fresh secret seeds: a perturbed reference, trial inputs and reference outputs (on the device, where
        they are judged on a GPU). The inputs go to the worker in the payload, on the host, or on a GPU in
        buffers shared with it (exchange.Shared), with a poisoned buffer for each output of each call. One
        trial's own inputs at a time are on the device: with several candidates preparing at once, the
        inputs of all their trials at full size twice over would not fit beside the workers."""
        try:
            return self.prepare_job()
        except exchange.ExchangeError as exc:  # no device buffers to share here: files from now on
            log.warning("sharing trials on the device failed (%s); sending them through files", exc)
            self.exchanging = False
            return self.prepare_job()

    def prepare_job(self) -> Prepared:
        op = self.operator
        model_seed = secrets.randbits(62)
        torch.manual_seed(model_seed)
        model = op.build(self.small)
        perturb_(model, self.config.perturbation, torch.Generator().manual_seed(secrets.randbits(62)))
        model = model.to(self.device).eval()
        shared = exchange.Shared(self.device_index or 0) if self.exchanging else None
        hosted: list[list[Any]] = []
        refs: list[list[torch.Tensor]] = []
        containers: list[str] = []
        inputs_shared: list[list[dict[str, Any] | None]] = []
        described: list[list[dict[str, Any]]] = []
        notes: list[str] = []
        first: list[Any] = []
        work: list[dict[str, int]] = []
        sent: list[list[Any]] = []  # each trial's inputs, in the order of refs
        selections: list[dict[int, Selection]] = []  # per trial, its outputs that are an unstable sort's indices

        def add(inputs: list[Any], note: str = "", out: Any = None) -> None:
            nonlocal first
            on_device = to_device(inputs, self.device)
            if out is None:
                out = self.run_reference(model, on_device)
                work.append(self.last_work)
            else:  # transformed or reweighted inputs: trial 0's shapes, so its work
                work.append(work[0] if work else self.last_work)
            sent.append(inputs)
            containers.append(type(out).__name__)
            selections.append(self.selection_of(out))
            refs.append([t.detach().clone() if self.is_cuda else t.detach() for t in as_outputs(out)])
            described.append(jobfiles.describe_inputs(on_device))
            notes.append(note)
            if shared is None:
                hosted.append(to_device(inputs, "cpu"))
            else:
                descs = [shared.put(x) if exchange.shareable(x) else None for x in on_device]
                inputs_shared.append(descs)
                hosted.append(
                    [None if d is not None else to_device([x], "cpu")[0] for x, d in zip(inputs, descs, strict=True)]
                )
            if len(hosted) == 1:
                first = hosted[0] if shared is None else on_device
                if self.probe_tolerances is None:
                    self.probe_once(refs[0], to_device(on_device, "cpu") if shared is not None else first)

        defaults: list[list[Any]] = []
        try:
            for _ in range(self.trials):
                torch.manual_seed(secrets.randbits(62))
                defaults.append(self.generated(lambda: op.inputs(self.small)))
                add(defaults[-1])
            torch.manual_seed(secrets.randbits(62))
            variants = self.generated(lambda: op.variants(self.small))
            if not variants:
                torch.manual_seed(secrets.randbits(62))
                variants = self.auto_variants(model, self.generated(lambda: op.inputs(self.small)))
            if self.small:  # the GPU inputs' rank at the CPU's sizes, where the two declare different ranks
                small = self.generated(lambda: op.inputs(self.small))
                ranked = at_full_rank(op, small)
                if ranked is not None and not self.accepts(model, ranked):  # the values moved out of its domain
                    ranked = at_full_rank(op, small, distinct=False)
                if ranked is not None and self.accepts(model, ranked):
                    variants = [*variants, ranked]
            edges = self.edge_variants(model, self.generated(lambda: op.inputs(self.small)), variants)
            for variant in variants:
                add(variant)
            edged_at = len(refs)
            slacks: dict[int, list[torch.Tensor | None]] = {}
            significants: dict[int, list[torch.Tensor | None]] = {}
            for variant in edges:  # longer rows than trial 0's: more terms, and each term's rounding, per element
                add(variant)
                slacks[len(refs) - 1], significants[len(refs) - 1] = self.rounding_slack(model, variant, refs[-1])
            torch.manual_seed(secrets.randbits(62))
            transformed_at = len(refs)
            for note, inputs, out in self.transformed(model, self.generated(lambda: op.inputs(self.small))):
                add(inputs, note, out)
                if not note.startswith(ROWS_APART_NOTE):  # rows of the draw's values, each row at its own size:
                    # judged as the default trials are (the class slack, no rounding slack of the terms' size, which
                    # under a tf32 class would pass bf16 operands: only the values, not the kernel, moved)
                    slacks[len(refs) - 1], significants[len(refs) - 1] = self.rounding_slack(model, inputs, refs[-1])
            tolerances = {
                t: self.trial_tolerances(refs[t], slacks.get(t), significants.get(t))
                for t in range(edged_at, len(refs))
            }
            torch.manual_seed(secrets.randbits(62))
            reweights = self.reweighted(model, self.generated(lambda: op.inputs(self.small)), add)
            if reweights is not None:
                tolerances[len(refs) - 1] = self.trial_tolerances(refs[-1])
            payload = {
                "init": op.init_inputs(self.small),
                "state": {k: v.detach().to("cpu") for k, v in model.state_dict().items()},
            }
            if op.spec.training and "full" in self.init_sizes:
                payload["init_full"] = op.init_inputs(False)
            if op.spec.training and "reset" in self.init_sizes:
                payload["init_reset"] = True
            if op.spec.training and "device" in self.init_sizes:
                payload["init_device"] = self.device
            prepared = Prepared(payload, refs, model, containers, first, shared)
            prepared.sent = {"trials": hosted, "reweighted": reweights}
            prepared.described, prepared.notes, prepared.tolerances = described, notes, tolerances
            prepared.selections = selections
            if self.operator.spec.precision in PRECISION_EPS:
                last = len(refs) - 1 if reweights is not None else len(refs)
                for t in range(len(refs)):
                    reference = model
                    if t == last and reweights is not None:  # the reweighted call's reference ran with its state
                        reference = copy.deepcopy(model)
                        reference.load_state_dict({k: v.to(self.device) for k, v in reweights.items()})
                    slacks_t = self.class_slack(reference, sent[t], refs[t])
                    if slacks_t is not None:
                        prepared.class_slacks[t] = slacks_t
            prepared.reweighted = reweights is not None
            prepared.work = work
            prepared.modes = self.use_modes(model, to_device(first, self.device), refs[0])
            if op.spec.training:
                declared = range(len(defaults), len(defaults) + len(variants))
                edged = range(len(defaults) + len(variants), transformed_at)
                transformed = range(transformed_at, len(refs) - (1 if reweights is not None else 0))
                prepared.gradients = self.gradient_calls(
                    model,
                    sent,
                    reweights,
                    prepared.modes,
                    declared,
                    edged,
                    [(t, notes[t]) for t in transformed],
                    sum(r.is_floating_point() for r in refs[0]),
                )
                if self.timing_available and prepared.gradients:  # the backward again after the timed steps
                    prepared.after_gradient = self.held(self.reference_gradients(model, sent[0], 0))
            if shared is not None:
                if self.reference_timing is not None:  # trial 0 only gives shapes and dtypes from now on
                    prepared.first = [
                        torch.empty_like(x, device="meta") if isinstance(x, torch.Tensor) else x for x in first
                    ]
                calls, after = [], []
                for _, trial in exchange.call_plan(self.trials, len(refs), prepared.reweighted):
                    views, descs = shared.outputs(refs[trial])  # none for outputs it cannot share: the file
                    prepared.calls.append(views)
                    calls.append(descs)
                for trial in range(self.after_trials if self.timing_available else 0):
                    views, descs = shared.outputs(refs[trial])
                    prepared.after.append(views)
                    after.append(descs)
                prepared.descriptors = {"inputs": inputs_shared, "calls": calls, "after": after, "fds": len(shared.fds)}
                torch.cuda.synchronize(self.device_index)  # written before the worker reads them
            return prepared
        except BaseException:
            if shared is not None:
                shared.close()
            raise

    def run_reference(self, model: nn.Module, inputs: list[Any]) -> Any:
        """The reference's outputs on (a copy of) inputs. The first run also records the aten ops it runs: under
        the hybrid policy those on the eligible list are the library ops the candidate may keep."""
        copies = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        with torch.no_grad():
            recorder = ReferenceOps(selections=True)
            with recorder:
                out = model(*copies)
            self.last_work = dict(recorder.work)
            if recorder.selections:  # found again among the outputs (prepare_job's add); entries of dead runs go
                for key in [k for k, (alive, _) in list(self.selected.items()) if alive() is None]:
                    self.selected.pop(key, None)
            for indices, selection in recorder.selections:
                self.selected[id(indices)] = (weakref.ref(indices), selection)
            if self.reference_ops is not None:
                return out
            self.reference_counts = dict(recorder.counts)
            self.grant(frozenset(recorder.ops))
            return out

    def selection_of(self, out: Any) -> dict[int, Selection]:
        """The outputs of a reference run (by position) that are the very indices tensor an unstable sort or topk
        of that run returned, with what it sorted."""
        chosen = {}
        for k, t in enumerate(as_outputs(out)):
            entry = self.selected.get(id(t))
            if entry is not None and entry[0]() is t:
                chosen[k] = entry[1]
        return chosen

    def grant(self, reference_ops: frozenset[str]) -> None:
        """The ops a candidate may run outside Triton: the strict lists, and under the hybrid policy the
        eligible library ops (rules/runtime.yaml hybrid_default) that the operator's own reference runs, plus
        those its file declares (FOUNDRY_HYBRID_OPS)."""
        with self.reference_lock:
            self.reference_ops = reference_ops
            strict = set(self.rules.runtime.strict_ops())
            allowed = set(strict)
            if self.policy == "hybrid":
                eligible = set(self.rules.runtime.hybrid_default)
                # a flagged form (scatter_[reduce], index_put_[accumulate]) as the reference runs it, by its op
                kept = {n for n in reference_ops if n.partition("[")[0] in eligible and not n.endswith("[dtype]")}
                allowed |= kept | set(self.operator.spec.hybrid_ops)
            self.allowed_ops = frozenset(allowed)
            self.library_ops = self.allowed_ops - strict  # reported as library work
            self.strict_ops = frozenset(strict)

    def granted(self, name: str | None) -> bool:
        """Whether an op (its rule name, flags included: convolution[8x8x3x3/1]) may run outside Triton: granted
        as the reference runs it, or declared by the operator's file (FOUNDRY_HYBRID_OPS, any form of it)."""
        if name is None:
            return False
        declared = self.policy == "hybrid" and name.partition("[")[0] in self.operator.spec.hybrid_ops
        return name in self.allowed_ops or (declared and not name.endswith("[dtype]"))

    def library_name(self, name: str | None) -> str | None:
        """The library op a granted op is reported as (its flags dropped), or None for strict and refused ones."""
        if name is None or name in self.strict_ops or not self.granted(name):
            return None
        return name.partition("[")[0]

    def transformed(self, model: nn.Module, inputs: list[Any]) -> list[tuple[str, list[Any], Any]]:
        """Trials whose floating-point inputs are moved within the operator's domain: special values (ties, exact
        zeros, a zero row, a constant row; whole numbers; -inf entries), signs flipped at random (and laid out
        non-contiguously), scaled by 1e3, by 16 and by 1e-3, offset. A kernel right only for one input distribution or
        one layout (a copy passing for ReLU on non-negative inputs, an exp that overflows at scale, a kernel that
        assumes contiguous rows, a branch on x == 0, another tie-break, -inf read as 0) fails one. Each group's
        first form the reference accepts is used (finite outputs, not one value everywhere:
        correctness.unusable): (note, inputs, reference outputs)."""
        floats = [isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() > 0 for x in inputs]
        float_inputs = [x for x, f in zip(inputs, floats, strict=True) if f]
        if not any(floats):
            return []

        def each(fn: Callable[[torch.Tensor], torch.Tensor]) -> list[Any]:
            return [fn(x) if f else x for x, f in zip(inputs, floats, strict=True)]

        # the scale factors, each moved by a secret amount within its band (away from the draw's own spread): no row
        # statistic tells a scaled trial from use by matching a factor known from this file
        bands = [(LARGE, 0.0, 0.5), (WIDER, -0.2, 0.1), (SMALL, -0.5, 0.0)]
        if self.operator.spec.precision in ("tf32", "bf16"):
            bands += [(BEYOND_HALF[0], 0.0, 0.5), (BEYOND_HALF[1], -0.5, 0.0)]
        jitter = secrets.SystemRandom()
        factors = [factor * 10 ** jitter.uniform(lo, hi) for factor, lo, hi in bands]

        def offset(x: torch.Tensor) -> torch.Tensor:
            spread = float(x.detach().abs().double().mean())
            return x + OFFSET * (spread if spread > 0 else 1.0)

        def flipped(x: torch.Tensor) -> torch.Tensor:  # half the signs, at random: all-negative inputs to a
            signs = torch.randint(0, 2, x.shape, device=x.device).to(x.dtype) * 2 - 1  # ReLU would give zeros
            return x * signs

        def gridded(x: torch.Tensor) -> torch.Tensor:  # values on a grid of a quarter of the mean magnitude:
            spread = float(x.detach().abs().double().mean())  # repeated values (ties), some exact zeros
            step = spread / 4 if spread > 0 else 1.0
            return torch.round(x / step) * step

        def pixels(x: torch.Tensor) -> torch.Tensor:  # whole numbers from 0 to 255, as images' pixels
            return torch.randint(0, 256, x.shape, device=x.device).to(x.dtype)

        def whole(x: torch.Tensor) -> torch.Tensor:  # the values rounded to whole numbers, about 16 times their size
            spread = float(x.detach().abs().double().mean())
            return torch.round(x * (16 / spread if spread > 0 else 1.0))

        def zeroed(x: torch.Tensor) -> torch.Tensor:  # 10% of the elements exactly 0, and the first row
            y = x.clone()
            y[torch.rand(y.shape, device=y.device) < 0.1] = 0
            if y.dim() >= 2:
                y.reshape(-1, y.shape[-1])[0] = 0  # a view: clone() is contiguous
            return y

        def special(x: torch.Tensor) -> torch.Tensor:  # the above, and one row of a single value
            y = zeroed(gridded(x))
            rows = y.reshape(-1, y.shape[-1]) if y.dim() >= 2 else None
            if rows is not None and rows.shape[0] > 1:
                rows[1] = rows[1, 0] if bool(rows[1, 0] != 0) else 1.0
            return y

        def far(x: torch.Tensor, factor: float = OFFSET_FAR) -> torch.Tensor:  # the mean far from 0 against the spread
            spread = float(x.detach().double().std()) if x.numel() > 1 else 0.0
            return x + factor * (spread if spread > 0 else 1.0)

        def rows_apart(x: torch.Tensor) -> torch.Tensor:
            # each row (along the last dimension) times its own factor, log-uniform over ROWS_APART decades either
            # way, and each element times exp(t * z) with the row's own t in [0, ROWS_TAIL): rows from normal to
            # heavy-tailed (outlier features), as real activations have them
            rows = x.reshape(-1, x.shape[-1]) if x.dim() >= 2 else x.reshape(1, -1)
            count = rows.shape[0]
            exponents = (torch.rand(count, 1, dtype=torch.float64) * 2 - 1) * ROWS_APART
            tails = torch.rand(count, 1, dtype=torch.float64) * ROWS_TAIL
            factors = torch.pow(10.0, exponents) * torch.exp(tails * torch.randn(rows.shape, dtype=torch.float64))
            return (rows * factors.to(device=x.device, dtype=x.dtype)).reshape(x.shape)

        def only(k: int, fn: Callable[[torch.Tensor], torch.Tensor]) -> list[Any]:  # input k alone
            return [fn(x) if i == k else x for i, x in enumerate(inputs)]

        def first_only(fn: Callable[[torch.Tensor], torch.Tensor]) -> list[Any]:  # the first floating input
            return only(floats.index(True), fn)

        def nonfinite(x: torch.Tensor) -> torch.Tensor:  # a quarter of the rows hold a NaN or a +inf entry
            y = x.clone()
            rows = y.reshape(-1, y.shape[-1]) if y.dim() >= 2 else y.reshape(1, -1)
            count = rows.shape[0]
            picked = torch.randperm(count, device=y.device)[: max(1, count // 4)] if count > 1 else None
            if picked is None:  # one row: one NaN entry
                rows[0, int(torch.randint(0, rows.shape[1], ()))] = float("nan")
            else:
                for j, row in enumerate(picked.tolist()):
                    rows[row, int(torch.randint(0, rows.shape[1], ()))] = float("nan") if j % 2 == 0 else float("inf")
            return rows.reshape(x.shape) if y.dim() >= 2 else rows.reshape(x.shape)

        def minus_inf(x: torch.Tensor) -> torch.Tensor:  # masked positions (attention masks): scattered in a
            y = x.clone()  # third of the rows (the first column finite), a leading run (left padding, a sliding
            mask = torch.rand(y.shape, device=y.device) < 0.1  # window) or a trailing run in the others; no row is
            if y.dim() >= 1:  # all -inf
                mask[..., 0] = False
                padded(mask.reshape(-1, y.shape[-1]), modes=3)
            if not mask.any() and y.dim() >= 1 and y.shape[-1] > 1:  # at least one, or the trial is the plain inputs
                flat = mask.reshape(-1, y.shape[-1])
                flat[int(torch.randint(0, flat.shape[0], ())), int(torch.randint(1, y.shape[-1], ()))] = True
            y[mask] = float("-inf")
            return y

        def padded(rows: torch.Tensor, modes: int) -> None:  # rows[i] (True: masked) a padding pattern by i % modes:
            n = rows.shape[1]  # 0 as given, 1 a leading run of n/2..n-1, 2 a trailing run from 1..n/2, 3 all but
            if n < 2:  # the last
                return
            for i in range(rows.shape[0]):
                mode = i % modes
                if mode == 1:
                    rows[i] = False
                    rows[i, : int(torch.randint(n // 2, n, ()))] = True
                elif mode == 2:
                    rows[i] = False
                    rows[i, int(torch.randint(1, n // 2 + 1, ())) :] = True
                elif mode == 3:
                    rows[i] = True
                    rows[i, -1] = False

        def valid_padded(m: torch.Tensor) -> torch.Tensor:  # a bool mask (True: valid) padded as above, and the
            rows = (~m).reshape(-1, m.shape[-1]).clone()  # first column masked in the rows kept as given
            rows[0::4, 0] = True
            padded(rows, modes=4)
            rows[rows.all(dim=1), -1] = False  # at least one valid position per row
            return (~rows).reshape(m.shape)

        groups = [
            [
                ("special values: ties, exact zeros, a zero row, a constant row", lambda: each(special)),
                ("exact zeros and a zero row", lambda: each(zeroed)),
                ("ties: values on a grid", lambda: each(gridded)),
            ],
            [  # whole numbers (pixels, counts, token ids as floats): a kernel switching to a cheaper path for them
                ("whole numbers 0 to 255", lambda: each(pixels)),
                ("whole numbers", lambda: each(whole)),
            ],
            [("-inf entries", lambda: each(minus_inf))],
            [
                ("signs flipped, non-contiguous", lambda: each(lambda x: strided(flipped(x)))),
                ("inputs non-contiguous", lambda: each(strided)),
                ("signs flipped", lambda: each(flipped)),
            ],
            [  # where some input has rows: each row inside a wider buffer (a piece of a split), the other layout
                (  # a kernel reading non-contiguous inputs as transposed gets wrong
                    "non-contiguous: rows of a wider buffer",
                    lambda: each(lambda x: strided(x, "split")) if any(t.dim() >= 2 for t in float_inputs) else None,
                ),
            ],
            *([(f"inputs x{factor:.3g}", lambda factor=factor: each(lambda x: x * factor))] for factor in factors),
            *(  # one input at a time: scaled together, a product's sum is dominated by a few terms and cancels less
                [(f"{ROWS_APART_NOTE}{k} scaled apart", lambda k=k: only(k, rows_apart))]
                for k in [i for i, x in enumerate(inputs) if floats[i] and x.numel() > 1][:ROWS_APART_INPUTS]
            ),
            [("inputs offset", lambda: each(offset))],
            [(f"inputs offset by {OFFSET_FAR:g}x their spread", lambda: each(far))],
            *(  # a class coarser than fp32 rounds the far trial's products so coarsely that its slack hides a
                # variance that cancels; farther, E[x^2] - E[x]^2 loses every digit of it (NaN or garbage rows);
                # the first input alone (an activation; a weight so offset cancels the product's every digit)
                [
                    [
                        (
                            f"first input offset by {OFFSET_FARTHER:g}x its spread",
                            lambda: first_only(lambda x: far(x, OFFSET_FARTHER)),
                        )
                    ]
                ]
                if self.operator.spec.precision in PRECISION_EPS
                else []
            ),
            [("NaN and +inf entries", lambda: first_only(nonfinite))],
        ]
        labels = [
            isinstance(x, torch.Tensor) and x.dtype in (torch.int64, torch.int32) and x.numel() > 1 for x in inputs
        ]

        def ignored(x: torch.Tensor) -> torch.Tensor:  # a quarter of the labels at -100, the ignore_index of
            y = x.clone()  # torch's losses (padding): where the reference refuses a negative index, no trial
            mask = torch.rand(y.shape, device=y.device) < 0.25
            mask.view(-1)[0] = True
            y[mask] = IGNORED_LABEL
            return y

        masks = [
            isinstance(x, torch.Tensor) and x.dtype == torch.bool and x.dim() >= 1 and x.shape[-1] > 1 for x in inputs
        ]

        def padded_inputs() -> list[Any]:  # the masks padded, and the floating inputs of a mask's shape holding
            out = [valid_padded(x) if f else x for x, f in zip(inputs, masks, strict=True)]  # values beyond every
            shape = next(x.shape for x, f in zip(out, masks, strict=True) if f)  # valid one at its masked positions
            valid = next(x for x, f in zip(out, masks, strict=True) if f)
            for i, (x, f) in enumerate(zip(out, floats, strict=True)):
                if f and x.shape == shape:
                    far_off = 8 * (float(x.detach().abs().max()) + 1)
                    sign = torch.ones(x.shape[:-1] + (1,), device=x.device, dtype=x.dtype)
                    sign.reshape(-1)[1::2] = -1
                    out[i] = torch.where(valid.to(x.device), x, far_off * sign)
            return out

        if any(masks):
            groups.append(
                [
                    (
                        "masks padded: leading and trailing runs of masked positions, rows with one valid position, "
                        "values beyond the valid ones at masked positions",
                        padded_inputs,
                    )
                ]
            )
        if any(labels):
            groups.append(
                [
                    (
                        "labels at -100 (ignored)",
                        lambda: [ignored(x) if f else x for x, f in zip(inputs, labels, strict=True)],
                    )
                ]
            )
        found: list[tuple[str, list[Any], Any]] = []
        for group in groups:
            for note, make in group:
                candidate = make()
                if candidate is None:  # does not apply to these inputs
                    continue
                try:
                    # a fused attention's NaN handling is the math form's (CPU's flash kernel drops a NaN in q)
                    with math_attention() if note.startswith("NaN") else contextlib.nullcontext():
                        out = self.run_reference(model, to_device(candidate, self.device))
                except Exception:  # the reference refuses these inputs: not a trial
                    continue
                outs = [t for t in as_outputs(out) if isinstance(t, torch.Tensor)]
                if note.startswith("NaN"):
                    usable = propagates(outs, candidate) and not (self.reference_ops or frozenset()) & NAN_AMBIGUOUS
                else:
                    usable = unusable(outs) is None
                if usable:
                    found.append((note, candidate, out))
                    break
        return found

    def trial_tolerances(
        self,
        refs: list[torch.Tensor],
        slacks: list[torch.Tensor | None] | None = None,
        significants: list[torch.Tensor | None] | None = None,
    ) -> list[Tolerance]:
        """A transformed trial's tolerance per output: the operator's, with atol scaled to that trial's own
        outputs (inputs scaled by 1e-3 have outputs far below the first trial's), and each element's rounding
        slack and significance where given (rounding_slack; significance under the fp32 precision class only)."""
        tolerances = [strengthened(r, self.tolerance, self.rules.tolerance.probe_scale) for r in refs]
        if slacks:
            tolerances = [
                dataclasses.replace(t, slack=slacks[k]) if k < len(slacks) else t for k, t in enumerate(tolerances)
            ]
        if significants and self.operator.spec.precision == "fp32":  # a class that computes coarser than the
            tolerances = [  # reference (tf32, fp16/bf16 math on fp32 data) loses small values by its own rounding
                dataclasses.replace(t, significant=significants[k]) if k < len(significants) else t
                for k, t in enumerate(tolerances)
            ]
        return tolerances

    def epsilon(self, dtype: torch.dtype) -> float:
        """The rounding unit of a computation in the operator's precision class producing `dtype`: the dtype's
        epsilon, or the class's where it computes coarser (a tf32 class multiplies 10-bit mantissas in fp32 outputs,
        as the GPU does and the interpreter emulates)."""
        return max(torch.finfo(dtype).eps, PRECISION_EPS.get(self.operator.spec.precision, 0.0))

    def rounding_slack(
        self, model: nn.Module, inputs: list[Any], refs: list[torch.Tensor]
    ) -> tuple[list[torch.Tensor | None], list[torch.Tensor | None]]:
        """Per output, the rounding an implementation may differ from the reference by on these inputs: SLACK_ULPS
        epsilons of the output's dtype times the reference's output on the inputs' absolute values (for sums and
        products, the sum of the magnitudes of the terms: an error bound that cancellation does not shrink, as
        |result| does), and for an output reduced from the inputs, of the largest intermediate value the
        reference computes. None where the reference refuses those inputs or an output does not match. Second,
        per output, the elements the reference computes to 3 significant digits of its fp64 twin
        (correctness.significant; reference_noise)."""
        noises, significants = self.reference_noise(model, inputs, refs)
        absolute = [x.abs() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        try:
            out = self.run_reference(model, to_device(absolute, self.device))
        except Exception:  # the reference refuses them: no slack
            return [None] * len(refs), significants

        def slack(o: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
            magnitude = torch.maximum(o.detach().abs(), r.detach().abs()).nan_to_num(0.0, 0.0, 0.0)
            return (SLACK_ULPS * self.epsilon(r.dtype) * magnitude).to(r.dtype)

        slacks = per_output(refs, out, slack)
        # Signed weights cancel too (a linear layer on |x| still sums positive and negative products): the terms'
        # magnitudes are the reference's output with its floating parameters made absolute as well.
        magnitudes = copy.deepcopy(model)  # the same model with |parameters|
        state = [t for t in list(magnitudes.parameters()) + list(magnitudes.buffers()) if t.is_floating_point()]
        if state:
            with torch.no_grad():
                for t in state:
                    t.abs_()
            try:
                unsigned = per_output(refs, self.run_reference(magnitudes, to_device(absolute, self.device)), slack)
            except Exception:  # noqa: BLE001 - the reference refuses absolute parameters: the slack above stands
                unsigned = []
            for k, extra in enumerate(unsigned):
                if extra is not None and k < len(slacks):
                    slacks[k] = extra if slacks[k] is None else torch.maximum(slacks[k], extra)
        for k, noise in enumerate(noises):
            if noise is not None and k < len(slacks):
                slacks[k] = noise if slacks[k] is None else torch.maximum(slacks[k], noise)
        # An output reduced from the inputs (a loss, a per-row statistic) may be the difference of intermediate
        # values far larger than itself (a KL divergence of nearly equal distributions: two sums of about log C
        # that cancel): its rounding is that of the largest intermediate, whatever |result| and |inputs| are.
        widest = max((x.numel() for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()), default=0)
        if any(r.is_floating_point() and r.numel() < widest for r in refs):
            recorder = ReferenceOps(magnitudes=True)
            copies = [x.clone() if isinstance(x, torch.Tensor) else x for x in to_device(inputs, self.device)]
            try:
                with torch.no_grad(), recorder:
                    model(*copies)
            except Exception:  # noqa: BLE001 - no intermediate magnitudes: the slack above stands
                return slacks, significants
            for k, r in enumerate(refs):
                if r.is_floating_point() and r.numel() < widest:
                    floor = torch.full_like(r, SLACK_ULPS * self.epsilon(r.dtype) * recorder.largest)
                    slacks[k] = floor if slacks[k] is None else torch.maximum(slacks[k], floor)
        return slacks, significants

    def class_slack(
        self, model: nn.Module, inputs: list[Any], refs: list[torch.Tensor]
    ) -> list[torch.Tensor | None] | None:
        """Per output, CLASS_NOISE_FACTOR times the distance of the class reference (the model run with the
        operands of its matrix products and convolutions rounded to the operator's precision class) from the fp32
        computation, plus that computation's distance from the reference (on a GPU a tf32 class's reference
        convolutions run in TF32 themselves). None where the class is fp32, or the model refuses a run."""
        rounding = CLASS_ROUNDING.get(self.operator.spec.precision)
        if rounding is None:
            return None
        on_device = to_device(inputs, self.device)
        flags = torch.backends.cudnn.flags(enabled=True, allow_tf32=False) if self.is_cuda else contextlib.nullcontext()
        try:
            with torch.no_grad(), flags, math_attention():  # fused attention paths run their products one by one
                truth = model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in on_device])
                with ClassRounding(rounding):
                    rounded = model(*[x.clone() if isinstance(x, torch.Tensor) else x for x in on_device])
        except Exception:  # noqa: BLE001 - the model refuses a run: no class slack
            return None
        truths, roundeds = as_outputs(truth), as_outputs(rounded)
        slacks: list[torch.Tensor | None] = []
        for k, r in enumerate(refs):
            o = roundeds[k] if k < len(roundeds) else None
            t = truths[k] if k < len(truths) else None
            if not (isinstance(o, torch.Tensor) and r.is_floating_point() and o.shape == r.shape):
                slacks.append(None)
                continue
            t = t if isinstance(t, torch.Tensor) and t.shape == r.shape else r
            gap = CLASS_NOISE_FACTOR * (o.detach().double() - t.detach().double()).abs()
            gap = gap + (t.detach().double() - r.detach().double()).abs()
            slacks.append(gap.nan_to_num(0.0, 0.0, 0.0).to(r.dtype))
        return slacks

    def reference_noise(
        self, model: nn.Module, inputs: list[Any], refs: list[torch.Tensor]
    ) -> tuple[list[torch.Tensor | None], list[torch.Tensor | None]]:
        """Per output, NOISE_FACTOR times how far the reference's own result lies from the same computation in
        fp64: on inputs where the answer is mostly rounding (a loss of nearly equal distributions, a sum that cancels),
        the reference is no more right than an honest kernel, and a tolerance scaled to that answer would judge
        noise. Where the reference is well conditioned this is far below the tolerance and changes nothing. Second,
        the elements where the reference holds the fp64 value to 3 significant digits (correctness.significant).
        None where the fp64 run is refused or an output does not match."""
        if not any(r.is_floating_point() and r.dtype != torch.float64 for r in refs):
            return [None] * len(refs), [None] * len(refs)
        try:
            twin = copy.deepcopy(model).double()
            wide = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
            with torch.no_grad():
                out = twin(*to_device(wide, self.device))
        except Exception:  # noqa: BLE001 - an fp64 run the model refuses gives no noise estimate
            return [None] * len(refs), [None] * len(refs)

        def noise(o: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
            gap = (r.detach().double() - o.detach().double()).abs().nan_to_num(0.0, 0.0, 0.0)
            return (NOISE_FACTOR * gap).to(r.dtype)

        def exact(o: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
            return significant(r, o) if r.dtype != torch.float64 else torch.zeros_like(r, dtype=torch.bool)

        significants = per_output(refs, out, exact)
        for steady in self.steady(model, inputs, out, len(refs)):
            pairs = itertools.zip_longest(significants, steady)
            significants = [s if s is None or m is None else s & m.to(s.device) for s, m in pairs]
        return per_output(refs, out, noise), significants[: len(refs)]

    def steady(self, model: nn.Module, inputs: list[Any], out: Any, n: int) -> list[list[torch.Tensor | None]]:
        """Per jittered fp64 run (JITTER_DRAWS of them), per output, where the fp64 result `out` moved by at most
        STEADY_RTOL of itself when every floating input, parameter and buffer moved by JITTER_ULPS epsilons of the
        inputs' dtype (jittered()); all False for an output whose jittered run is refused or does not match."""
        outs = as_outputs(out)
        floats = [x.dtype for x in inputs if isinstance(x, torch.Tensor) and x.is_floating_point()]
        unit = JITTER_ULPS * max((torch.finfo(d).eps for d in floats), default=torch.finfo(torch.float32).eps)
        draws: list[list[torch.Tensor | None]] = []
        for _ in range(JITTER_DRAWS):
            try:
                twin = copy.deepcopy(model).double()
                wide = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
                moved = jittered(twin, wide, secrets.randbits(62), unit)
                with torch.no_grad():
                    shifted = as_outputs(twin(*to_device(moved, self.device)))
            except Exception:  # noqa: BLE001 - refused: nothing is steady
                shifted = []
            masks: list[torch.Tensor | None] = []
            for k in range(n):
                o = outs[k] if k < len(outs) else None
                j = shifted[k] if k < len(shifted) else None
                if not isinstance(o, torch.Tensor) or not o.is_floating_point():
                    masks.append(None)
                elif isinstance(j, torch.Tensor) and j.shape == o.shape:
                    w = o.detach().double()
                    masks.append(((j.detach().double() - w).abs() <= STEADY_RTOL * w.abs()).cpu())
                else:
                    masks.append(torch.zeros(o.shape, dtype=torch.bool))
            draws.append(masks)
        return draws

    def reweighted(
        self, model: nn.Module, inputs: list[Any], add: Callable[[list[Any], str, Any], None]
    ) -> dict[str, torch.Tensor] | None:
        """The state of the plan's last call: the parameters and floating buffers moved again (the worker
        writes them in place, as an optimizer step does), drawn from another distribution than the init
        (redraw_) where the reference stays finite with them; that trial's reference runs with them and is
        judged relative to its own outputs. None for a model without floating state."""
        state = [t for t in list(model.parameters()) + list(model.buffers()) if t.is_floating_point()]
        if not state:
            return None
        generator = torch.Generator().manual_seed(secrets.randbits(62))
        moved = copy.deepcopy(model)
        perturb_(moved, self.config.perturbation, generator)
        redrawn = copy.deepcopy(moved)
        redraw_(redrawn, generator)
        out = self.run_reference(redrawn, to_device(inputs, self.device))
        if unusable([t for t in as_outputs(out) if isinstance(t, torch.Tensor)]) is None:
            moved = redrawn  # else the reference overflows (or saturates) with them: the init range, perturbed
        else:
            out = self.run_reference(moved, to_device(inputs, self.device))
        add(inputs, "parameters changed in place", out)
        return {k: v.detach().to("cpu") for k, v in moved.state_dict().items()}

    def gradient_calls(
        self,
        model: nn.Module,
        sent: list[list[Any]],
        reweights: dict[str, torch.Tensor] | None,
        modes: dict[str, bool],
        declared: range,
        edged: range,
        transformed: list[tuple[int, str]],
        count: int = 1,
    ) -> list[dict[str, Any]]:
        """The gradient calls of a training operator, on the trials use has and the default one does not: trial
        0 with the state sent; the next default trial after the parameters changed in place; the declared shape
        variants (up to GRADIENT_VARIANTS; another rank, another row count); the largest edge variant (rows past
        a tile); the transformed trials with labels at -100 and with non-contiguous inputs. How each call runs is
        drawn here, secretly, so that no combination is the checked one: the upstream gradient's layout
        (gradients.LAYOUTS, each at least once where there are as many calls), inputs that do not require grad
        (a first layer: only the parameters' gradients), parameters that do not (a part, the rest, all of them),
        inputs that are outputs of another op (non-leaf), train or eval mode where the reference ignores the mode,
        zeros in the upstream gradient (rows, whole columns), a backward while .grad holds values (one through
        torch.autograd.grad, one through loss.backward()), the outputs multiplied in place before the backward,
        the inputs and parameters changed in place between forward and backward, the double backward's
        cotangents' layout. An operator whose reference depends on the mode
        (batch statistics) trains in train mode: every call but one (eval mode, frozen statistics) runs in it,
        with the buffers the call leaves judged beside the gradients; one random in train mode (dropout) is
        checked in eval mode only. Last, one call as a training step has it whatever the draws."""
        draw = secrets.SystemRandom()
        always = not modes.get("train") and self.deterministic_in_train(model, sent[0])
        trial = min(1, self.trials - 1)
        picks = [(0, False), (trial, reweights is not None)]
        picks += [(t, False) for t in list(declared)[:GRADIENT_VARIANTS]]
        largest = (
            max(edged, key=lambda t: sum(x.numel() for x in sent[t] if isinstance(x, torch.Tensor))) if edged else 0
        )
        if edged:
            picks.append((largest, False))
        structural = []  # calls on a layout or shape the default trials lack: each asks for every gradient
        for marker in ("-100", "non-contiguous"):
            found = [t for t, note in transformed if marker in note]
            for t in found[: 1 if marker == "-100" else 2]:  # each non-contiguous layout: transposed, split rows
                if marker == "non-contiguous":
                    structural.append(len(picks))
                picks.append((t, False))

        # and the farthest offset and the smallest scale, each asking for every gradient: a backward that recomputes a
        # statistic in one pass (E[x^2] - E[x]^2), or clamps with eps where the forward adds it, is right on normal
        # draws and wrong there (their slack is the jittered fp64 gradients' spread: cancellation is honest there)
        def small(note: str) -> bool:
            try:
                return note.startswith("inputs x") and float(note.removeprefix("inputs x")) < 0.1
            except ValueError:
                return False

        shifted = [t for t, note in transformed if "offset by" in note][-1:]  # the farthest (a class's farther one)
        for t in shifted + [t for t, note in transformed if small(note)][:1]:
            structural.append(len(picks))
            picks.append((t, False))
        while len(picks) < GRADIENT_CALLS_MIN:  # enough calls for each layout and mode to meet the others
            picks.append((len(picks) % self.trials, False))
        n = len(picks)

        def some(count: int) -> list[bool]:  # a secret choice of calls, at least one in and one out where n > 1
            chosen = [draw.random() < 0.5 for _ in range(count)]
            if count > 1 and (all(chosen) or not any(chosen)):
                chosen[draw.randrange(count)] = not chosen[0]
            return chosen

        layouts = list(gradients.LAYOUTS) + ["dense"] * max(0, n - len(gradients.LAYOUTS))  # dense, as most are
        draw.shuffle(layouts)
        layouts = layouts[:n] if "dense" in layouts[:n] else ["dense", *layouts[: n - 1]]
        # the permuted layout where the leading dimensions are more than one (a 3-d output used transposed)
        deep = [
            k
            for k in range(n)
            if max((x.dim() for x in sent[picks[k][0]] if isinstance(x, torch.Tensor)), default=0) >= 3
        ]
        if "permuted" in layouts and deep and layouts.index("permuted") not in deep:
            k, q = layouts.index("permuted"), draw.choice(deep)
            layouts[k], layouts[q] = layouts[q], layouts[k]
        dense = [k for k in range(n) if layouts[k] == "dense" and k not in structural] or [
            k for k in range(n) if layouts[k] == "dense"
        ]
        has_params = any(p.is_floating_point() and p.requires_grad for p in model.parameters())
        # where the reference depends on the mode, one call in eval mode (the statistics constants: a frozen
        # batch norm that the layers below train through), never with frozen inputs; the others in train mode
        evaluated = draw.choice([k for k in range(n) if layouts[k] != "expanded"]) if always else -1
        frozen = some(n) if has_params else [False] * n
        for k in [evaluated, *structural] if always else structural:
            frozen[k] = False
        dense_free = [k for k in dense if k != evaluated]
        if has_params and dense_free and not any(frozen[k] for k in dense):  # a first layer, a real upstream
            frozen[draw.choice(dense_free)] = True
        if len(dense) > 1 and all(frozen[k] for k in dense):  # and a later layer with one
            frozen[draw.choice(dense)] = False
        if all(frozen):
            frozen[draw.choice([k for k in range(n) if k not in dense] or dense)] = False
        nonleaf = [not f and c for f, c in zip(frozen, some(n), strict=True)]
        if not any(nonleaf[k] and layouts[k] != "expanded" for k in range(n)):
            free = [k for k in range(n) if not frozen[k] and layouts[k] != "expanded"]
            if free:
                nonleaf[draw.choice(free)] = True
        if always:
            train = [k != evaluated for k in range(n)]
        elif modes.get("train"):
            train = some(n)
            if not any(not train[k] and not frozen[k] for k in range(n)):  # eval mode, inputs requiring grad:
                train[draw.choice([k for k in range(n) if not frozen[k]])] = False  # saliency, adversarial inputs
        else:
            train = [False] * n
        # where the allocations hold reused values (as the plain call's), not NaN: at least one call each way
        finite = some(n)
        # parameters that do not train in one call (a frozen base layer, BitFit): some of them, never leaving
        # the call without a gradient to ask for
        named = [name for name, p in model.named_parameters() if p.is_floating_point() and p.requires_grad]
        # one backward after another through the same graph (retain_graph, two losses), asking for every gradient
        again = [False] * n
        pick = draw.choice([k for k in range(n) if not frozen[k]] or list(range(n)))
        again[pick] = True
        frozen_params: list[tuple[str, ...]] = [()] * n
        everything = None
        if named:  # a random part of them in one call and the rest in another: each is frozen while others train
            part = draw.sample(named, draw.randint(1, max(1, len(named) - 1)) if len(named) > 1 else 1)
            rest = [name for name in named if name not in part]
            # and all of them in a third, on a dense upstream the backward could write over (a frozen layer, prompt
            # tuning: only the inputs' gradients), where part and rest are not already all
            whole_frozen = (
                [k for k in dense if k not in (evaluated, pick, *structural) and not frozen[k]]
                or [k for k in dense if k != pick]
                or [k for k in range(n) if k != pick]
            )
            everything = draw.choice(whole_frozen) if len(named) > 1 else None
            free = [k for k in range(n) if k not in (evaluated, pick, everything, *structural)] or [
                k for k in range(n) if k not in (pick, everything)
            ]
            chosen_calls = list(zip(draw.sample(free, min(len(free), 2)), (part, rest), strict=False))
            if everything is not None:
                chosen_calls.append((everything, named))
            for k, chosen in chosen_calls:
                if chosen:
                    frozen_params[k] = tuple(chosen)
                    if len(chosen) == len(named):
                        frozen[k] = False  # the inputs' gradients are what is left to ask for
        # the upstream gradient's size: a mean over a large batch hands back tiny values, a loss scaler large ones;
        # contiguous bands, so that no threshold on |dy| lies where no draw can reach (fp32: 1e-8 to 1e6, a loss
        # scaler's 65536 inside; fp16/bf16 within their range), on calls that ask for every gradient where they can
        low = trial_dtype(sent[0]) in (torch.float16, torch.bfloat16)
        scales = [1.0] * n
        spreads: list[tuple[float, ...] | None] = [None] * n
        ranges = [(-4.0, -2.0), (0.5, 1.5)] if low else [(-8.0, -4.0), (1.0, 5.0)]
        whole = [k for k in range(n) if not frozen[k] and not frozen_params[k]]
        others = [k for k in range(n) if k not in whole]
        draw.shuffle(whole)
        draw.shuffle(others)
        order = whole + others
        for k, (lo, hi) in zip(order, ranges, strict=False):  # all tiny (a mean loss), all large (a loss scaler)
            scales[k] = 10 ** draw.uniform(lo, hi)
        # and each value's size apart, across the whole range, on a call whose upstream holds a value per element
        # (not one per row or per broadcast slice: a handful of values leaves bands of sizes empty): any threshold
        # on |dy| is crossed
        apart = [k for k in order[2:] if layouts[k] in ("dense", "strided", "padded", "permuted")]
        if apart:
            spreads[apart[0]] = (-5.0, 2.0) if low else (-8.0, 6.0)
        # and each row's size apart on another (per-example gradients of different sizes), over a secret range of
        # one to six decades where it lies: no statistic of the values along a reduction tells the checked calls
        # from use (normal values, a fixed range)
        if len(apart) > 1:
            width = draw.uniform(1.0, 3.0 if low else 6.0)
            lo = draw.uniform(-4.0, 2.0 - width) if low else draw.uniform(-7.0, 5.0 - width)
            spreads[apart[1]] = (lo, lo + width, 1.0)
        # exact zeros in the upstream gradient (masked rows, a ReLU above) on a call asking for every gradient,
        # its allocations NaN: a backward that skips the rows where dy is zero leaves them unwritten
        holes = [False] * n
        # rows stay rows; one value per row (the rows layout) holds no zero column
        holeable = [k for k in range(n) if layouts[k] not in ("expanded", "permuted", "broadcast", "rows")]
        holed = draw.choice(
            [k for k in whole if k in holeable] or [k for k in holeable if not frozen[k]] or holeable or list(range(n))
        )
        holes[holed], finite[holed], frozen[holed] = True, False, False
        # a backward onto .grad that already holds values (gradient accumulation), on a default trial's leaves:
        # one through torch.autograd.grad (the gradient returned, .grad untouched), one through loss.backward()
        # (.grad grows by the gradient); one call each where there are two
        accumulate: list[bool | str] = [False] * n
        plain = [k for k in whole if picks[k][0] < self.trials] or whole  # the retain_graph call (pick) is whole
        summed = draw.sample(plain, min(2, len(plain)))
        more = [k for k in range(n) if k not in summed and not frozen_params[k] and picks[k][0] < self.trials]
        summed += draw.sample(more, min(2 - len(summed), len(more)))  # short of two: any asking for every parameter
        paths = ["grad", "backward"]
        draw.shuffle(paths)
        for k, how in zip(summed, paths, strict=False):
            accumulate[k], nonleaf[k] = how, False
        # two calls more, dense on trial 0 asking for every gradient, with a change in place after the forward: of
        # the outputs (an in-place ReLU or dropout above) in one, of the inputs and parameters (an in-place
        # residual, an optimizer step before the backward) in the other; autograd refusing either is allowed (a
        # call of its own: what it refuses is judged elsewhere), gradients that come back must be the forward's
        # an operator with several floating outputs: one call's loss leaves some of them out (a block's residual
        # stream unused after the last layer): autograd hands the backward None or zeros for them
        # (a drawn part of them in one call, the rest in another: each output's gradient absent once)
        unused: list[list[int] | None] = [None] * n
        if count > 1:  # the reference's floating outputs
            part = draw.sample(range(count), draw.randint(1, count - 1))
            open_calls = [k for k in range(n) if not (again[k] or accumulate[k] or holes[k]) and k not in structural]
            pool = open_calls if len(open_calls) >= 2 else list(range(n))
            draw.shuffle(pool)
            chosen = sorted(pool, key=lambda k: frozen[k])[:2]  # calls asking for the inputs' gradients first
            for k, left in zip(chosen, (sorted(part), [i for i in range(count) if i not in part]), strict=False):
                unused[k], frozen[k] = left, False  # the inputs' gradients: what an absent output changes most
        mask: list[int | None] = [None] * n
        modify: list[int | None] = [None] * n
        quiet: list[bool | str] = [False] * n
        degenerate: list[int | None] = [None] * n

        def appended(trial: int = 0, **fields: Any) -> None:
            """One call more: dense on `trial`, asking for every gradient, in train mode where the reference
            allows it, its allocations' fill drawn; `fields` set otherwise."""
            picks.append((trial, False))
            defaults = {
                "layouts": "dense",
                "frozen": False,
                "nonleaf": False,
                "train": bool(modes.get("train")) or always,
                "finite": draw.random() < 0.5,
            }
            defaults |= fields
            layouts.append(defaults["layouts"])
            frozen.append(defaults["frozen"])
            nonleaf.append(defaults["nonleaf"])
            train.append(defaults["train"])
            finite.append(defaults["finite"])
            scales.append(1.0)
            spreads.append(None)
            frozen_params.append(())
            again.append(False)
            holes.append(False)
            accumulate.append(False)
            mask.append(defaults.get("mask"))
            modify.append(defaults.get("modify"))
            unused.append(None)
            quiet.append(defaults.get("quiet", False))
            degenerate.append(defaults.get("degenerate"))

        appended(mask=secrets.randbits(62))
        appended(modify=secrets.randbits(62))
        # where the reference keeps batch statistics, two calls more in train mode with autograd off (statistics
        # re-estimated as swa_utils.update_bn or test-time adaptation do), one under no_grad, one under
        # inference_mode on inference tensors: their outputs and buffers are judged
        for how in ("no_grad", "inference") if always else ():
            appended(frozen=True, train=True, quiet=how)
        # and one on trial 0 with degenerate rows and features (gradients.degenerate: rows zero, a feature
        # zero), asking for every gradient: a backward dividing by a statistic that is zero there (an unclamped
        # norm, a variance without eps) gives NaN where the reference's gradients are finite. Judged on that, and
        # on the values where the reference has no kink (subgradients at zero differ between honest kernels)
        if any(isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2 for x in sent[0]):
            appended(degenerate=secrets.randbits(62))
        # and one call as a training step has it, whatever the draws: the largest shape, inputs that are another
        # op's outputs, a dense upstream gradient, train mode where the reference allows it; then two that ask
        # for the derivative of the gradients (a gradient penalty), each upstream gradient in a drawn layout, one
        # requiring grad (a nonlinear loss), one not (a penalty on y.sum()): each must match or raise
        constant = [False] * len(picks)
        second_layouts = ["dense"] * len(picks)
        # the second backward's cotangents in the first-order family of layouts (a gradient penalty on gx.sum(-1),
        # gx.sum(0)), one not dense at least
        drawn_second = [draw.choice(gradients.LAYOUTS) for _ in range(3)]
        if all(layout == "dense" for layout in drawn_second):
            drawn_second[draw.randrange(3)] = draw.choice([lay for lay in gradients.LAYOUTS if lay != "dense"])
        for last in (0, 1, 2, 3):
            # the first-order half built under create_graph reads dy too: dense and rows in a wider buffer where dy
            # requires grad (a buffer read as dense rows is wrong there), another layout where it does not
            layout = ["dense", "dense", "padded", draw.choice(["strided", "expanded", "permuted", "rows"])][last]
            # a whole backward of the last calls would run the chain's ops in the log
            appended(largest, layouts=layout, nonleaf=not last, finite=False)
            constant.append(last == 3)
            second_layouts.append(drawn_second[last - 1] if last else "dense")
        calls = []
        for k, (t, moved) in enumerate(picks):
            reference = model
            if moved and reweights is not None:
                reference = copy.deepcopy(model)
                reference.load_state_dict({name: v.to(self.device) for name, v in reweights.items()})
            call = self.reference_gradients(
                reference,
                sent[t],
                t,
                reweighted=moved,
                layout=layouts[k % len(layouts)],
                frozen=frozen[k],
                nonleaf=nonleaf[k],
                train=train[k],
                scale=scales[k],
                spread=spreads[k],
                frozen_params=frozen_params[k],
                again=again[k],
                second=k >= len(picks) - 3,
                finite=finite[k],
                holes=holes[k],
                accumulate=accumulate[k],
                constant=constant[k],
                second_layout=second_layouts[k],
                mask=mask[k],
                modify=modify[k],
                unused=unused[k],
                quiet=quiet[k],
                degenerate=degenerate[k],
            )
            if call is not None:
                calls.append(self.held(call))
        return calls

    def deterministic_in_train(self, model: nn.Module, inputs: list[Any]) -> bool:
        """Whether the reference gives the same outputs twice in train mode from the same state (batch
        statistics: yes; dropout: no)."""
        try:
            outs = []
            for _ in range(2):
                copied = copy.deepcopy(model).train()
                with torch.no_grad():
                    outs.append(as_outputs(copied(*to_device(inputs, self.device))))
        except Exception:  # noqa: BLE001 - a reference that refuses train mode is checked in eval mode
            return False
        return all(torch.equal(a, b) for a, b in zip(*outs, strict=True))

    def held(self, entry: dict[str, Any]) -> dict[str, Any]:
        """A gradient call's reference answers (gradients, outputs, buffers and their tolerances) where they wait
        for the judging: on the host when the device is a GPU. They are several times the inputs' size per call,
        and a training operator has a dozen or more calls: on the device they would crowd out the candidate's
        own process (a 4096 x 32000 cross-entropy's calls held some 50 GB). Judging moves one call's back."""
        return tensors_to(entry, "cpu") if self.is_cuda else entry

    def reference_gradients(
        self,
        model: nn.Module,
        inputs: list[Any],
        trial: int,
        reweighted: bool = False,
        layout: str = "dense",
        frozen: bool = False,
        train: bool = False,
        nonleaf: bool = False,
        scale: float = 1.0,
        spread: tuple[float, ...] | None = None,
        frozen_params: tuple[str, ...] = (),
        again: bool = False,
        second: bool = False,
        finite: bool = False,
        holes: bool = False,
        accumulate: bool | str = False,
        constant: bool = False,
        second_layout: str = "dense",
        mask: int | None = None,
        modify: int | None = None,
        unused: list[int] | None = None,
        quiet: bool | str = False,
        degenerate: int | None = None,
    ) -> dict[str, Any] | None:
        """One gradient call of a training operator: a fresh seed for the upstream gradients (held in `layout`),
        the reference's gradients of its floating inputs (unless `frozen`) and parameters (None where an output
        does not depend on one), and per gradient the operator's tolerance scaled to it, with a slack of
        NOISE_FACTOR times the reference's own distance from the same gradients in fp64 (sums over a batch
        cancel: the reference is no more right there) and SLACK_ULPS epsilons of its magnitude (at least of its
        terms'); the forward's outputs with the tolerances of a trial's. `train`: in train
        mode, on a copy of the model, whose buffers after the call (running statistics, counts) the candidate's
        must match. `scale`: the upstream gradients' size; `frozen_params`: parameters that do not require grad in
        this call (a frozen base layer under LoRA, BitFit: the others' gradients only); `again`: a backward through
        the same graph first (retain_graph=True, a second loss); `second`: the call checks double backward
        instead (the derivative of the gradients from another draw), or None where the reference has none to
        check. `finite`: the candidate's allocations hold reused values in this call (the worker's plain fill),
        not NaN. `holes`, `accumulate`, `constant`, `second_layout`, `unused`: gradients.compute's. `mask`,
        `modify`: the worker changes the outputs, or the inputs and parameters, in place between forward and
        backward (gradients.compute's); the gradients expected are those of the forward that ran, these. `quiet`:
        the forward alone, autograd off (gradients.compute's); `degenerate`: the seed of gradients.degenerate's rows
        and feature made zero, on both sides."""
        seed = secrets.randbits(62)
        options = {"holes": holes, "accumulate": accumulate, "constant": constant, "second_layout": second_layout}
        options |= {"mask": mask, "unused": unused, "quiet": quiet}
        on_device = gradients.degenerate(to_device(inputs, self.device), degenerate)
        trained = frozen_copy(model, frozen_params).train(train)
        held = gradients.with_grad(on_device, frozen, nonleaf)
        wanted, second_seed = None, None
        recorder = ReferenceOps()  # the reference's library work in the call, forward and backward: the hybrid bound
        again_seed = secrets.randbits(62) if again and not second else None
        if second:
            second_seed = secrets.randbits(62)
            try:
                wanted = self.carrying(
                    frozen_copy(model, frozen_params).train(train), on_device, seed, frozen, layout, constant
                )
                if not wanted:  # no gradient of the reference depends on a target: nothing second-order to check
                    return None
                call = {"layout": layout, "second": second_seed, "wanted": wanted}  # gradients.compute's, this call
                with recorder:
                    names, refs, outs = gradients.compute(trained, held, seed, **call, **options)
            except Exception:  # noqa: BLE001 - the reference has no double backward: nothing to hold the candidate to
                return None
        else:
            call = {"layout": layout, "scale": scale, "again": again_seed, "spread": spread}
            with recorder:
                names, refs, outs = gradients.compute(trained, held, seed, **call, **options)
        extra = {"scale": scale, "spread": spread, "frozen_params": list(frozen_params), "finite": finite}
        extra |= {"again": again_seed, "second": second_seed, "wanted": wanted, "modify": modify} | options
        extra |= {"degenerate": degenerate}
        extra |= {"reference_counts": dict(recorder.counts), "reference_work": dict(recorder.work)}
        buffers = [(n, b.detach().clone()) for n, b in trained.named_buffers()] if train else []
        wide = self.gradients_fp64(
            frozen_copy(model, frozen_params),
            on_device,
            seed,
            layout,
            frozen,
            train,
            names,
            scale,
            second_seed,
            wanted,
            spread,
            options | {"again": again_seed},
        )
        # How far the fp64 gradients move when every input, parameter, buffer, upstream value and op result moves by
        # an ulp: where they cancel (a batch norm's input gradient under one upstream value broadcast, rows offset
        # far from zero), any fp32 order of operations lands about that far from fp64, the reference's included
        unit = JOSTLE_ULPS * max((torch.finfo(r.dtype).eps for r in refs if r is not None), default=0.0)
        moved: list[torch.Tensor | None] = [None] * len(wide)
        for _ in range(JITTER_DRAWS if unit > 0 else 0):
            shaken = self.gradients_fp64(
                frozen_copy(model, frozen_params), on_device, seed, layout, frozen, train, names, scale,
                second_seed, wanted, spread, options | {"again": again_seed}, jitter=(secrets.randbits(62), unit),
            )  # fmt: skip
            for k, (a, b) in enumerate(zip(shaken, wide, strict=True)):
                if a is not None and b is not None and a.shape == b.shape:
                    gap = (a - b).abs().nan_to_num(0.0, 0.0, 0.0)
                    moved[k] = gap if moved[k] is None else torch.maximum(moved[k], gap)
        # The rounding an honest backward may add, per gradient, is of the size of its terms. Where a gradient is
        # structurally zero (a bias added before a softmax: the terms cancel for any upstream gradient; its fp64
        # value is no larger than its own fp32 noise) those terms are of the size of the call's largest gradient;
        # elsewhere of the gradient's own typical size, from a dense upstream draw (one value broadcast upstream
        # cancels a batch norm's weight gradient in this call, not in general).
        if layout == "dense":
            typical, typical_wide = refs, wide
        else:
            dense_seed = secrets.randbits(62)
            dense = frozen_copy(model, frozen_params).train(train)
            same = {"second": second_seed, "wanted": wanted, "constant": constant, "second_layout": second_layout}
            same |= {"mask": mask, "unused": unused, "again": again_seed}  # the same gradients, from a dense upstream
            typical = gradients.compute(
                dense, gradients.with_grad(on_device, frozen), dense_seed, scale=scale, spread=spread, **same
            )[1]
            typical_wide = self.gradients_fp64(
                frozen_copy(model, frozen_params),
                on_device,
                dense_seed,
                "dense",
                frozen,
                train,
                names,
                scale,
                second_seed,
                wanted,
                spread,
                {
                    "constant": constant,
                    "second_layout": second_layout,
                    "mask": mask,
                    "unused": unused,
                    "again": again_seed,
                },
            )

        def peak(t: torch.Tensor | None) -> float:
            return float(t.detach().abs().nan_to_num(0.0, 0.0, 0.0).max()) if t is not None and t.numel() else 0.0

        own = [peak(t) for t in typical]
        largest = max(own, default=0.0)
        produced = sum(o.numel() for o in outs)
        scales = []
        for k, t in enumerate(typical):
            w = typical_wide[k]
            zero = t is not None and w is not None and peak(w) <= NOISE_FACTOR * peak(w - t.double())
            # a gradient summed from many output elements (a norm's weight over the rows): its terms add up to
            # about the square root of their count times the typical gradient
            reduced = math.sqrt(max(1.0, produced / t.numel())) if t is not None and t.numel() else 1.0
            scales.append((largest if zero else own[k]) * reduced)
        scales += scales[: len(refs) - len(scales)]  # an earlier backward's gradients (again): their targets' size
        # under a class coarser than fp32, the same call's gradients and outputs with its products' operands rounded
        # to the class, forward and backward (class_slack's, for a call)
        class_grads, class_outs = self.class_call(
            model, frozen_params, train, on_device, frozen, nonleaf, seed, call | options
        )
        tolerances: list[Tolerance | None] = []
        for k, (ref, w, scale) in enumerate(zip(refs, wide, scales, strict=True)):
            if ref is None:
                tolerances.append(None)
                continue
            ref = ref.detach()
            eps = torch.finfo(ref.dtype).eps
            slack = SLACK_ULPS * eps * ref.abs().nan_to_num(0.0, 0.0, 0.0).clamp(min=scale)
            if w is not None and w.shape == ref.shape:
                slack = torch.maximum(slack, NOISE_FACTOR * (w.detach() - ref.double()).abs().nan_to_num(0.0, 0.0, 0.0))
            if moved[k] is not None and moved[k].shape == ref.shape:
                slack = torch.maximum(slack, NOISE_FACTOR * moved[k].to(slack.device))
            classed = class_grads[k] if k < len(class_grads) else None
            if classed is not None and classed.shape == ref.shape:
                slack = slack + CLASS_NOISE_FACTOR * (classed.detach().double() - ref.double()).abs().nan_to_num(
                    0.0, 0.0, 0.0
                )
            tolerance = strengthened(ref, self.tolerance, self.rules.tolerance.probe_scale)
            tolerances.append(dataclasses.replace(tolerance, slack=slack.to(ref.dtype)))
        output_tolerances = self.trial_tolerances(outs)
        if class_outs:
            gaps = [
                CLASS_NOISE_FACTOR
                * (c.detach().double() - o.detach().double()).abs().nan_to_num(0.0, 0.0, 0.0).to(o.dtype)
                if isinstance(c, torch.Tensor) and c.shape == o.shape
                else None
                for c, o in zip(class_outs, outs, strict=False)
            ]
            output_tolerances = with_slacks(output_tolerances, gaps)
        return {
            "trial": trial,
            "reweighted": reweighted,  # run with the reweighted call's state (the worker sets it in place first)
            "seed": seed,
            "layout": layout,
            "frozen": frozen,
            "nonleaf": nonleaf,
            "train": train,
            "names": names,
            "refs": [r.detach() if r is not None else None for r in refs],
            "tolerances": tolerances,
            "outputs": outs,
            "output_tolerances": output_tolerances,
            "buffer_names": [n for n, _ in buffers],
            "buffers": [b for _, b in buffers],
        } | extra

    def carrying(
        self,
        model: nn.Module,
        inputs: list[Any],
        seed: int,
        frozen: bool,
        layout: str = "dense",
        constant: bool = False,
    ) -> list[str]:
        """The targets whose reference gradients carry a graph under create_graph=True (those with a second
        derivative to check), from upstream gradients in `layout` that require grad unless `constant`."""
        held = gradients.with_grad(inputs, frozen)
        names, tensors = gradients.targets(model, held)
        with torch.enable_grad():
            outs = [o for o in gradients.differentiable(model(*held)) if o.requires_grad]
            cotangents = gradients.upstream(outs, seed, layout)
            if not constant:
                cotangents = [g.detach().requires_grad_(True) for g in cotangents]
            grads = torch.autograd.grad(outs, tensors, cotangents, allow_unused=True, create_graph=True)
        return [n for n, g in zip(names, grads, strict=True) if g is not None and g.requires_grad]

    def class_call(
        self,
        model: nn.Module,
        frozen_params: tuple[str, ...],
        train: bool,
        inputs: list[Any],
        frozen: bool,
        nonleaf: bool,
        seed: int,
        options: dict[str, Any],
    ) -> tuple[list[torch.Tensor | None], list[torch.Tensor]]:
        """A gradient call (gradients.compute with `options`) under ClassRounding, forward and backward: its gradients
        and outputs; empty where the class is fp32 or the model refuses the run."""
        rounding = CLASS_ROUNDING.get(self.operator.spec.precision)
        if rounding is None:
            return [], []
        try:
            with ClassRounding(rounding), math_attention():
                _, grads, outs = gradients.compute(
                    frozen_copy(model, frozen_params).train(train),
                    gradients.with_grad(inputs, frozen, nonleaf),
                    seed,
                    **options,
                )
        except Exception:  # noqa: BLE001 - no class run: the call's other slack stands
            return [], []
        return list(grads), list(outs)

    def gradients_fp64(
        self,
        model: nn.Module,
        inputs: list[Any],
        seed: int,
        layout: str,
        frozen: bool,
        train: bool,
        names: list[str],
        scale: float = 1.0,
        second: int | None = None,
        wanted: list[str] | None = None,
        spread: tuple[float, ...] | None = None,
        options: dict[str, Any] | None = None,
        jitter: tuple[int, float] | None = None,
    ) -> list[torch.Tensor | None]:
        """The same gradients computed in fp64 (a copy of the model, the same upstream draw): None each where the
        model refuses fp64. `jitter` (seed, unit): with every floating input, parameter and buffer, and the upstream
        gradients, each element moved by `unit` of itself, its sign drawn from the seed (jittered())."""
        try:
            twin = copy.deepcopy(model).double().train(train)
            doubled = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
            if jitter is not None:
                doubled = jittered(twin, doubled, *jitter)
            with Jostled(*jitter) if jitter is not None else contextlib.nullcontext():
                twin_names, wide, _ = gradients.compute(
                    twin,
                    gradients.with_grad(doubled, frozen),
                    seed,
                    layout=layout,
                    scale=scale,
                    second=second,
                    wanted=wanted,
                    spread=spread,
                    **(options or {}),
                )
        except Exception:  # noqa: BLE001 - an fp64 run the model refuses gives no noise estimate
            return [None] * len(names)
        return list(wide) if twin_names == names else [None] * len(names)

    def check_gradients_after_timing(
        self, message: dict[str, Any], jobdir: Path, prepared: Prepared
    ) -> Diagnosis | None:
        """The gradient call the worker ran after the timed training steps (a fresh upstream draw on trial 0),
        judged as the checked ones are: a backward that stops computing, or computes less, after many steps is
        as wrong as one that never did."""
        assert prepared.after_gradient is not None
        diag, _ = self.check_gradients(
            message, jobdir, prepared, [prepared.after_gradient], "gradients_after_timing.pt"
        )
        if diag is None:
            return None
        return diag.model_copy(
            update={
                "stage": Stage.TIMING,
                "kind": FailureKind.STATE_DEPENDENT,
                "rule": "state:after_timing",
                "message": f"after the timed training steps, the backward's gradients changed: {diag.message}",
            }
        )

    def check_gradients(
        self,
        message: dict[str, Any],
        jobdir: Path,
        prepared: Prepared,
        expected_calls: list[dict[str, Any]] | None = None,
        file: str = "gradients.pt",
    ) -> tuple[Diagnosis | None, list[dict[str, Any]]]:
        """The candidate's gradients (the worker's gradient calls, gradients.pt) against the reference's, and the
        runtime guard's records of those calls' forward and backward halves (judged with the others).
        `expected_calls`, `file`: other calls than the checked ones (prepared.gradients) and where their
        gradients are."""
        expected_calls = prepared.gradients if expected_calls is None else expected_calls
        calls = message.get("gradient_calls")
        grads = self.worker_outputs(jobdir / file) if (jobdir / file).exists() else []

        def failed(text: str, rule: str = "gradient", kind: FailureKind = FailureKind.MISMATCH) -> Diagnosis:
            return Diagnosis(stage=Stage.CORRECTNESS, kind=kind, rule=rule, message=text)

        if not isinstance(calls, list) or len(calls) != len(expected_calls) or len(grads) != len(calls):
            return failed(
                f"the candidate's process reported no gradients for the {len(expected_calls)} "
                "gradient calls of this training operator",
                kind=FailureKind.CRASH,
            ), []
        records: list[dict[str, Any]] = []
        refused_second = False  # a double backward refused loudly where the upstream gradients require grad
        for held, call, got in zip(expected_calls, calls, grads, strict=True):
            expected = tensors_to(held, self.device) if self.is_cuda else held  # one call's answers at a time (held)
            trial = expected["trial"]
            if (
                not isinstance(call, dict)
                or call.get("trial") != trial
                or not isinstance(call.get("records"), list)
                or not isinstance(got, list)
            ):
                return failed("the gradient calls reported are not the ones asked for", kind=FailureKind.CRASH), []
            records += [dict(r, trial=None) for r in call["records"] if isinstance(r, dict)]  # no forward's work
            setup = f"trial {trial}" + "".join(
                text
                for on, text in (
                    (expected["reweighted"], ", after the parameters changed in place"),
                    (expected["layout"] == "strided", ", a strided upstream gradient"),
                    (expected["layout"] == "padded", ", an upstream gradient of rows in a wider buffer"),
                    (expected.get("nonleaf"), ", inputs that are outputs of another op"),
                    (expected["layout"] == "expanded", ", one upstream value broadcast (stride 0)"),
                    (expected["frozen"], ", inputs not requiring grad"),
                    (expected.get("frozen_params"), f", {', '.join(expected.get('frozen_params') or [])} frozen"),
                    (expected.get("scale", 1.0) != 1.0, f", upstream gradients of size {expected.get('scale', 1):.2g}"),
                    (
                        expected.get("spread") is not None,
                        ", upstream {} of sizes 1e{:g} to 1e{:g}".format(
                            "rows" if len(expected.get("spread") or ()) > 2 else "values",
                            *(expected.get("spread") or (0, 0))[:2],
                        ),
                    ),
                    (expected.get("again") is not None, ", a second backward through the same graph"),
                    (expected.get("unused") is not None, ", a loss leaving some outputs out"),
                    (expected.get("finite"), ", allocations holding reused values"),
                    (expected.get("holes"), ", upstream gradients with exact zeros (masked rows, scattered)"),
                    (expected["layout"] == "rows", ", one upstream value per row broadcast along the last dimension"),
                    (
                        expected.get("accumulate") == "backward",
                        ", loss.backward() onto .grad already holding values (accumulation)",
                    ),
                    (
                        expected.get("accumulate") not in (None, False, "backward"),
                        ", torch.autograd.grad while .grad holds values (it must return the whole gradient and "
                        "leave .grad as it was)",
                    ),
                    (expected["layout"] == "broadcast", ", an upstream gradient broadcast (stride 0) along some dims"),
                    (
                        expected.get("second_layout", "dense") != "dense" and expected.get("second") is not None,
                        f", second-order cotangents held {expected.get('second_layout')}",
                    ),
                    (expected.get("mask") is not None, ", the outputs multiplied in place before the backward"),
                    (
                        expected.get("modify") is not None,
                        ", inputs and parameters changed in place between forward and backward",
                    ),
                    (expected.get("constant"), ", upstream gradients not requiring grad"),
                    (expected.get("second") is not None, ", double backward (create_graph=True)"),
                    (expected["train"], ", train mode"),
                    (
                        expected.get("quiet"),
                        f" with autograd off ({expected.get('quiet')}: statistics re-estimated, no backward)",
                    ),
                    (
                        expected.get("degenerate") is not None,
                        ", a quarter of each input's rows zero (padding) and a feature zero (a dead channel)",
                    ),
                )
                if on
            )
            if expected.get("second") is not None:
                if call.get("detached") and expected.get("constant") and refused_second:
                    # once_differentiable's own way: it raises where dy requires grad, detaches where not; the
                    # first-order gradients it built are judged (a gradient penalty reads them)
                    expected, call = first_order(expected, call), call | {"detached": None}
                if call.get("detached"):
                    return failed(
                        f"{setup}: the gradients of {', '.join(map(str, call['detached'][:5]))} carry no graph where "
                        "the reference's do: a gradient penalty or any double backward through this kernel silently "
                        "gets zero second derivatives. Compute them, or refuse double backward loudly (decorate the "
                        "backward with @torch.autograd.function.once_differentiable, or raise under create_graph)",
                        rule="double_backward",
                    ), records
                if call.get("refused"):  # refused loudly: allowed; the first-order gradients built before, judged
                    refused_second = refused_second or not expected.get("constant")
                    if not call.get("names"):
                        continue
                    expected = first_order(expected, call)
            if (expected.get("mask") is not None or expected.get("modify") is not None) and call.get("refused"):
                continue  # autograd refused the change in place (a view output, a saved tensor changed): loud
            ops: dict[str, int] = {}
            work: dict[str, int] = {}
            for r in call["records"]:
                if isinstance(r, dict):
                    for op, n in (r.get("ops") or {}).items():
                        ops[op] = ops.get(op, 0) + n
                    for op, w in (r.get("work") or {}).items():
                        work[op] = work.get(op, 0) + (w if isinstance(w, int) else 0)
            more = self.beyond_reference(ops, work, expected["reference_work"], expected["reference_counts"])
            if more:
                return Diagnosis(
                    stage=Stage.RUNTIME_GUARD,
                    kind=FailureKind.RUNTIME_GUARD,
                    rule="non_triton_compute",
                    message=f"{setup}: library ops ran more often, or did more work, in forward and backward than "
                    f"the reference's forward and backward on the same inputs: {more}",
                    evidence=json.dumps(ops, sort_keys=True),
                ), records
            changed = [name for r in records for name in r.get("mutated_state") or []]
            if changed:
                return failed(
                    f"{setup}: forward and backward changed the module's state: {', '.join(changed[:5])} (a "
                    "kernel keeps state between calls)",
                    rule="state_unmodified",
                    kind=FailureKind.STATE_DEPENDENT,
                ), records
            written = [name for r in records for name in r.get("mutated_inputs") or []]
            if any(name.startswith("the .grad of") for name in written):
                return failed(
                    f"{setup}: the backward wrote into {', '.join(written[:5])}: torch.autograd.grad returns the "
                    "whole gradient and leaves .grad as it was (a gradient norm, a meta-learning inner step, a "
                    "penalty taken during accumulation would count it twice at the next optimizer step)",
                    rule="inputs_unmodified",
                    kind=FailureKind.INPUT_MUTATION,
                ), records
            if written:
                return failed(
                    f"{setup}: the backward modified {', '.join(written[:5])} (autograd may hand the same tensor to "
                    "another branch: a residual's gradient)",
                    rule="inputs_unmodified",
                    kind=FailureKind.INPUT_MUTATION,
                ), records
            n_grads, n_outs = len(expected["names"]), len(expected["outputs"])
            got_grads, outputs, buffers = got[:n_grads], got[n_grads : n_grads + n_outs], got[n_grads + n_outs :]
            if len(outputs) != len(expected["outputs"]):
                return failed(
                    f"{setup}: the forward gave {len(outputs)} floating outputs, not {len(expected['outputs'])}",
                    rule="output_count",
                ), records
            for k, (o, ref) in enumerate(zip(outputs, expected["outputs"], strict=True)):
                diag = compare(
                    o.to(self.device),
                    ref,
                    expected["output_tolerances"][k],
                    kind=FailureKind.MISMATCH,
                    what=f"{setup}, gradient call's forward ("
                    + ("grad disabled" if expected.get("quiet") else "grad enabled, inputs requiring grad")
                    + f"), output {k}",
                )
                if diag is not None:
                    return diag, records
            if call.get("buffer_names") != expected["buffer_names"] or len(buffers) != len(expected["buffers"]):
                return failed(
                    f"{setup}: the module's buffers after the call are not the reference's "
                    f"({', '.join(expected['buffer_names']) or 'none'})",
                    rule="state_unmodified",
                    kind=FailureKind.STATE_DEPENDENT,
                ), records
            for name, b, ref in zip(expected["buffer_names"], buffers, expected["buffers"], strict=True):
                if not ref.is_floating_point():  # a count (num_batches_tracked): exactly
                    if not torch.equal(b.to(ref.device), ref):
                        return failed(
                            f"{setup}: buffer {name} after the call is {b.tolist()}, not {ref.tolist()}",
                            rule="state_unmodified",
                            kind=FailureKind.STATE_DEPENDENT,
                        ), records
                    continue
                diag = compare(
                    b.to(self.device),
                    ref,
                    strengthened(ref, self.tolerance, self.rules.tolerance.probe_scale),
                    kind=FailureKind.MISMATCH,
                    what=f"{setup}, buffer {name} after the call (train mode updates it)",
                )
                if diag is not None:
                    return diag, records
            names = call.get("names")
            if names != expected["names"]:
                lacking = [n for n in expected["names"] if n not in (names or [])]
                return failed(
                    f"{setup}: gradients are asked for {', '.join(expected['names'])}; the candidate gives none "
                    f"for {', '.join(lacking) or 'the same list'} (a parameter held as a buffer, or not requiring "
                    "grad, is never trained)",
                    rule="gradient_missing",
                ), records
            missing = set(call.get("missing") or [])
            if len(got_grads) != len(names):
                return failed("the gradient calls reported are not the ones asked for", kind=FailureKind.CRASH), []
            for k, name in enumerate(names):
                ref, tolerance = expected["refs"][k], expected["tolerances"][k]
                what = f"gradient of {name} ({setup}, random upstream gradient)"
                if name in missing:
                    if ref is None or not bool(ref.any()):
                        continue
                    return failed(
                        f"{what}: none, where the reference's is not zero (detached from autograd: gradients stop "
                        "there in training)",
                        rule="gradient_missing",
                    ), records
                grad = got_grads[k].to(self.device)
                if ref is None:  # the reference's output does not depend on it: zeros are as good as none
                    ref, tolerance = torch.zeros_like(grad), self.tolerance
                if expected.get("degenerate") is not None:  # finite where the reference's is (gradient_calls)
                    if grad.shape == ref.shape and grad.is_floating_point():
                        broken = ref.isfinite() & ~grad.isfinite()
                        if bool(broken.any()):
                            return failed(
                                f"{what}: {int(broken.sum())} of {ref.numel()} elements are NaN or infinite where "
                                "the reference's are finite (a division by a statistic that is zero on a zero row: "
                                "clamp it as the forward does)",
                                rule="gradient",
                            ), records
                        if (self.reference_ops or frozenset()) & KINKED:  # values differ between honest ones
                            continue
                diag = compare(grad, ref, tolerance, kind=FailureKind.MISMATCH, what=what)
                if diag is not None:
                    rule = "gradient" if diag.kind is FailureKind.MISMATCH else diag.rule
                    return diag.model_copy(update={"rule": rule}), records
        return None, records

    def use_modes(self, model: nn.Module, inputs: list[Any], refs: list[torch.Tensor]) -> dict[str, bool]:
        """How the worker may call the candidate besides eval mode without grad, as modules are used: in train
        mode ("train", where the reference's outputs do not change with the mode: no dropout, no batch
        statistics), and on floating inputs that require grad ("requires_grad", where the reference accepts
        them with the same outputs). Its calls on inputs at new addresses run so (worker.run)."""

        def same(out: Any) -> bool:
            got = [t.detach() for t in as_outputs(out)]
            return len(got) == len(refs) and all(
                g.shape == r.shape and g.dtype == r.dtype and torch.allclose(g, r, rtol=1e-5, atol=1e-6, equal_nan=True)
                if r.is_floating_point()
                else torch.equal(g, r)
                for g, r in zip(got, refs, strict=True)
            )

        def tried(mode: str) -> bool:
            copies = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
            try:
                if mode == "train":
                    trained = copy.deepcopy(model).train()  # a copy: batch statistics would move the model's
                    with torch.no_grad():
                        return same(trained(*copies))
                copies = [
                    x.requires_grad_(True) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                    for x in copies
                ]
                with torch.enable_grad():
                    return same(model(*copies))
            except Exception:  # the reference refuses this mode
                return False

        return {"train": tried("train"), "requires_grad": tried("requires_grad")}

    def probe_once(self, refs: list[torch.Tensor], inputs: list[Any]) -> None:
        """The trivial-answer probes, on the first trial this evaluator prepares."""
        with self.reference_lock:
            if self.probe_tolerances is None:
                result = probe([r.cpu() for r in refs], inputs, self.tolerance, self.rules.tolerance.probe_scale)
                self.probe_tolerances = result.tolerances
                self.probe_notes = result.notes
                self.probe_weak = result.weak

    def child_memory_fraction(self, prepared: Prepared, alone: bool) -> float:
        """The device-memory cap of this candidate's worker (a fraction of the GPU's memory)."""
        if alone or not self.is_cuda:
            return self.config.gpu_memory_fraction
        total = total_memory(self.device_index)
        return memory_share(self.config.gpu_memory_fraction, self.admission.limit, prepared.held_bytes(), total)

    def generated(self, make: Callable[[], Any]) -> Any:
        """The operator's inputs. On a GPU its factories run on the device (a torch.device context), where
        full-size random inputs take milliseconds instead of seconds on the host; an operator whose input
        code cannot run that way is served from the host from then on."""
        if self.is_cuda and self.inputs_on_device:
            try:
                with torch.device(self.device):
                    return make()
            except Exception as exc:  # e.g. get_inputs goes through numpy
                log.debug("inputs on %s failed (%s); generating them on the host", self.device, exc)
                self.inputs_on_device = False
        return make()

    def accepts(self, model: nn.Module, variant: list[Any]) -> bool:
        """Whether the reference runs on these inputs (a variant it refuses is no trial)."""
        try:
            with torch.no_grad():
                model(*to_device([x.clone() if isinstance(x, torch.Tensor) else x for x in variant], self.device))
        except Exception:  # the reference itself does not accept this shape: not a variant
            return False
        return True

    def auto_variants(self, model: nn.Module, inputs: list[Any]) -> list[list[Any]]:
        """Without declared variants, vary the shapes ourselves where the reference allows it: the batch
        dimension one smaller and 2n+1 (odd, past the next power of two); for operators without parameters,
        the last dimension likewise; and one inner dimension one smaller (the innermost of those between the
        first and the last that the reference accepts changed: a square spatial input becomes non-square).
        These catch kernels specialized to the one declared shape, bounded by it, or that take one dimension
        for another."""
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        found: list[list[Any]] = []
        if tensors and all(t.dim() >= 1 and t.shape[0] == tensors[0].shape[0] > 1 for t in tensors):
            found.append([x[:-1].clone() if isinstance(x, torch.Tensor) else x for x in inputs])
            found.append([torch.cat([x, x.flip(0), x[:1]]) if isinstance(x, torch.Tensor) else x for x in inputs])
        stateless = not any(True for _ in model.parameters()) and not any(True for _ in model.buffers())
        if stateless and tensors and all(t.dim() >= 1 and t.shape[-1] == tensors[0].shape[-1] > 3 for t in tensors):
            found.append([x[..., :-1].clone() if isinstance(x, torch.Tensor) else x for x in inputs])
            found.append(
                [torch.cat([x, x.flip(-1), x[..., :1]], dim=-1) if isinstance(x, torch.Tensor) else x for x in inputs]
            )

        def accepted(variant: list[Any]) -> bool:
            return self.accepts(model, variant)

        usable = [variant for variant in found if accepted(variant)]
        rank = tensors[0].dim() if tensors else 0
        if rank >= 3 and all(t.dim() == rank for t in tensors):
            for dim in range(rank - 2, 0, -1):
                if all(t.shape[dim] == tensors[0].shape[dim] > 2 for t in tensors):
                    inner = [
                        x.narrow(dim, 0, x.shape[dim] - 1).clone() if isinstance(x, torch.Tensor) else x for x in inputs
                    ]
                    if accepted(inner):
                        usable.append(inner)
                        break
        return usable + self.resized_variants(model, inputs, usable)

    def resized_variants(self, model: nn.Module, inputs: list[Any], known: list[list[Any]]) -> list[list[Any]]:
        """Sizes the declared shapes tie together by chance, set apart: for each dimension of each input, the
        fewest dimensions of the same size (among the inputs') that the reference accepts resized with it, each
        such group resized once (2n+1 up to RESIZE_GROW, past a tile of that size; n-1 above, off any multiple):
        a matmul's M, N and K apart (declared 64 x 256 @ 256 x 64), attention's key length apart from the
        query's, a kernel that takes one size for another or assumes a size divides its tile is wrong on one.
        Groups whose shapes a known variant already has are skipped; at most RESIZE_VARIANTS, a secret choice
        among those that set a size apart first; the search stops after RESIZE_RUNS reference runs."""
        spots = [
            (k, d, int(n))
            for k, x in enumerate(inputs)
            if isinstance(x, torch.Tensor) and x.numel() > 0
            for d, n in enumerate(x.shape)
            if n > 1
        ]
        seen = {tuple(tuple(x.shape) for x in v if isinstance(x, torch.Tensor)) for v in known}
        groups: list[tuple[tuple[int, int], ...]] = []
        apart: list[bool] = []
        runs = 0
        for k, d, n in spots:
            if any((k, d) in g for g in groups) or runs >= RESIZE_RUNS:
                continue
            same = [(j, e) for j, e, m in spots if m == n and (j, e) != (k, d)]
            if len(same) > RESIZE_SAME_MAX:  # too many to search: alone or all of them
                tries = [(), tuple(same)]
            else:
                tries = [c for r in range(len(same) + 1) for c in itertools.combinations(same, r)]
            for extra in tries:
                group = ((k, d), *extra)
                variant = self.resize(inputs, group, n)
                runs += 1
                with math_attention():  # fused attention kernels take mismatched key and value lengths
                    accepted = variant is not None and self.accepts(model, variant)
                if accepted:
                    shapes = tuple(tuple(x.shape) for x in variant if isinstance(x, torch.Tensor))
                    if shapes not in seen:
                        seen.add(shapes)
                        groups.append(group)
                        apart.append(len(group) <= len(same))  # sets a size apart from another of its value
                    break
        draw = secrets.SystemRandom()
        ranked = sorted(range(len(groups)), key=lambda g: (not apart[g], draw.random()))  # those first
        chosen = [groups[g] for g in ranked[:RESIZE_VARIANTS]]
        return [v for g in chosen if (v := self.resize(inputs, g, inputs[g[0][0]].shape[g[0][1]])) is not None]

    @staticmethod
    def resize(inputs: list[Any], group: tuple[tuple[int, int], ...], n: int) -> list[Any] | None:
        """The inputs with each (input, dim) of `group` resized from n: grown to 2n+1 (the values again, flipped, and
        the first slice) up to RESIZE_GROW, else shrunk by one."""
        out = list(inputs)
        for k, d in group:
            x = out[k]
            if x.shape[d] != n:
                return None
            if n <= RESIZE_GROW:
                out[k] = torch.cat([x, x.flip(d), x.narrow(d, 0, 1)], dim=d)
            else:
                out[k] = x.narrow(d, 0, n - 1).clone()
        return out

    def edge_variants(
        self, model: nn.Module, inputs: list[Any], variants: list[list[Any]] | None = None
    ) -> list[list[Any]]:
        """Shapes and layouts that use has and declared shapes rarely do, where the reference accepts them: a
        batch of one (a fast path for one row), more than EDGE_ROWS rows (a grid capped without a loop over
        the rest; only while the elements stay under EDGE_ELEMENTS), a batch whose rows are a multiple of
        ALIGNED_ROWS (a fast path for row counts a tile divides), and rows padded in a wider buffer (a slice
        x[..., :d]: unit inner stride, row stride above d)."""
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        if not tensors:
            return []
        found: list[list[Any]] = []
        batch = tensors[0].shape[0] if tensors[0].dim() >= 1 else 0
        if batch > 1 and all(t.dim() >= 1 and t.shape[0] == batch for t in tensors):
            found.append([x[:1].clone() if isinstance(x, torch.Tensor) else x for x in inputs])
            per = self.rows_per_batch(model, inputs, batch)
            if per:
                size = max(batch, -(-EDGE_ROWS // per)) | 1
                cap = EDGE_ELEMENTS if self.small else 64 * EDGE_ELEMENTS
                if batch * per <= EDGE_ROWS and sum(t.numel() // batch * size for t in tensors) <= cap:
                    pick = torch.randint(0, batch, (size,), device=tensors[0].device)
                    found.append([x[pick] if isinstance(x, torch.Tensor) else x for x in inputs])
                # and the fewest batch elements whose rows are a multiple of ALIGNED_ROWS, every row tile's (a fast
                # path for a whole last tile, taken where the row count divides by it, which no odd count reaches)
                aligned = ALIGNED_ROWS // math.gcd(per, ALIGNED_ROWS)
                whole = (batch * per) % ALIGNED_ROWS == 0
                if aligned > 1 and not whole and sum(t.numel() // batch * aligned for t in tensors) <= cap:
                    pick = torch.randint(0, batch, (aligned,), device=tensors[0].device)
                    found.append([x[pick] if isinstance(x, torch.Tensor) else x for x in inputs])

        def padded(x: Any) -> Any:
            if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2 and x.numel() > 0):
                return x
            return torch.cat([x, x.flip(-1)], dim=-1)[..., : x.shape[-1]]

        wide = [padded(x) for x in inputs]
        if any(w is not x for w, x in zip(wide, inputs, strict=True)):
            found.append(wide)
        widest = self.widest(model, inputs, variants or [])
        if widest is not None:
            found.append(widest)
            masked = self.masked(model, widest)
            if masked is not None:
                found.append(masked)
        aligned = self.widest(model, inputs, variants or [], aligned=True)
        if aligned is not None:
            found.append(aligned)

        def permuted(x: Any) -> Any:  # the same values with leading dimensions that do not collapse into one stride
            if not (isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 3 and x.numel() > 0):
                return x
            return x.transpose(0, 1).contiguous().transpose(0, 1)

        for shaped in [inputs, *(variants or [])]:
            leading = [permuted(x) for x in shaped]
            if any(y is not x for y, x in zip(leading, shaped, strict=True)):
                found.append(leading)

        return [variant for variant in found if self.accepts(model, variant)]

    def rows_per_batch(self, model: nn.Module, inputs: list[Any], batch: int) -> int:
        """Rows (elements over the last dimension) per batch element, for the edge variant past EDGE_ROWS rows:
        of the first input and, where the reference's first output also leads with the batch, of that output.
        On a GPU the fewer of the two (both sides of the grid pass EDGE_ROWS); on the interpreter the more,
        so that an operator whose output has many more rows than its input (a transposed convolution,
        an upsampling) does not multiply its batch, and the interpreter's time, by the input's few rows."""
        first = next(x for x in inputs if isinstance(x, torch.Tensor))
        counts = [first.numel() // (batch * first.shape[-1]) if first.numel() and first.dim() >= 1 else 0]
        try:
            with torch.no_grad():
                out = as_outputs(
                    model(*to_device([x.clone() if isinstance(x, torch.Tensor) else x for x in inputs], self.device))
                )
        except Exception:  # the reference refuses them: the input's rows alone
            out = []
        lead = next((t for t in out if isinstance(t, torch.Tensor)), None)
        if lead is not None and lead.dim() >= 2 and lead.shape[0] == batch and lead.numel():
            counts.append(lead.numel() // (batch * lead.shape[-1]))
        counts = [c for c in counts if c]
        if not counts:
            return 0
        return max(counts) if self.small else min(counts)

    def widest(
        self, model: nn.Module, inputs: list[Any], variants: list[list[Any]], aligned: bool = False
    ) -> list[Any] | None:
        """For an operator without parameters whose floating inputs share their last dimension (and whose other
        tensors, if any, are per row, as class labels are: drawn again for the rows kept): that dimension
        wider than every declared shape and variant (at least WIDE_MIN, 4x the widest, plus a secret odd amount),
        with as many leading rows as keep the inputs under the edge element cap, the values drawn from the
        inputs' own: a kernel with one block per row capped at some width (no loop over the rest) is wrong here.
        `aligned`: instead, the next power of two above every declared width (at least 64): where a block divides
        the row (a fast path without masks) no declared or odd width goes. None where the operator has state,
        other inputs, or the cap leaves no row."""
        if any(True for _ in model.parameters()) or any(True for _ in model.buffers()):
            return None
        every = [x for x in inputs if isinstance(x, torch.Tensor)]
        tensors = [t for t in every if t.is_floating_point()]
        if not tensors or not all(t.dim() >= 1 and t.numel() > 0 for t in tensors):
            return None
        lead = tensors[0].shape[0] if tensors[0].dim() >= 2 else None
        labels = [t for t in every if not t.is_floating_point()]  # per row, as class indices are: resampled
        if any(lead is None or t.dim() < 1 or t.shape[0] != lead or t.numel() == 0 for t in labels):
            return None
        width = tensors[0].shape[-1]
        if any(t.shape[-1] != width for t in tensors):
            return None
        declared = [width] + [x.shape[-1] for v in variants for x in v if isinstance(x, torch.Tensor) and x.dim() >= 1]
        if aligned:
            wide = max(64, 1 << max(declared).bit_length())
        else:
            wide = (max(WIDE_MIN, 4 * max(declared)) + secrets.randbelow(1024)) | 1
        cap = EDGE_ELEMENTS if self.small else 64 * EDGE_ELEMENTS
        per_row = sum(math.prod(t.shape[1:-1]) * wide if t.dim() >= 2 else wide for t in tensors)
        rows = min(tensors[0].shape[0] if tensors[0].dim() >= 2 else 1, cap // max(per_row, 1))
        if rows < 1:
            return None

        def widened(x: Any) -> Any:
            if not isinstance(x, torch.Tensor):
                return x
            if not x.is_floating_point():  # labels: as many rows, drawn from the declared ones
                pick = torch.randint(0, x.shape[0], (rows,), device=x.device)
                return x[pick].clone()
            shape = (rows, *x.shape[1:-1], wide) if x.dim() >= 2 else (wide,)
            flat = x.detach().reshape(-1)
            pick = torch.randint(0, flat.numel(), (math.prod(shape),), device=flat.device)
            return flat[pick].reshape(shape).clone()

        return [widened(x) for x in inputs]

    def masked(self, model: nn.Module, wide: list[Any]) -> list[Any] | None:
        """The wide rows (widest) as masked attention scores are: the first floating input's leading part of
        every row at -1e9 (a padding mask added to logits) and one entry near the row's end far above the rest
        (a confident logit): a tiled kernel that takes its running statistics from the first tile alone overflows
        or divides by zero here. None where the reference's outputs on them are unusable (not finite, or one
        value everywhere)."""
        k = next((i for i, x in enumerate(wide) if isinstance(x, torch.Tensor) and x.is_floating_point()), None)
        if k is None or wide[k].dim() < 1 or wide[k].shape[-1] < 8:
            return None
        x = wide[k].clone()
        width = x.shape[-1]
        x[..., : width // 2] = -1e9
        spread = float(x[..., width // 2 :].detach().abs().double().max())
        x[..., width - 1 - secrets.randbelow(width // 8)] = spread + 120.0
        candidate = [x if i == k else y for i, y in enumerate(wide)]
        try:
            out = self.run_reference(model, to_device(candidate, self.device))
        except Exception:  # the reference refuses them
            return None
        if unusable([t for t in as_outputs(out) if isinstance(t, torch.Tensor)]) is not None:
            return None
        return candidate

    def run_isolated(
        self, candidate: Candidate, warnings: list[Diagnosis], started: float, alone: bool = False
    ) -> Verdict:
        """On a GPU the device is held only while a stage uses it: shared to prepare the reference outputs,
        for the candidate's correctness calls and to judge them; exclusively for its timing run (and, once,
        the reference's); shared again to judge its calls after the timing run. Writing and reading the job
        files and compiling the candidate (its worker compiles ahead, on meta tensors) hold nothing, so a
        timing run waits only for device work. alone: exclusively from start to end, with the whole memory
        cap."""
        gate = DeviceGate(self.device_lock if self.is_cuda else None)
        marks = {"start": time.monotonic()}

        def hold(name: str) -> None:  # shared, unless alone (exclusive throughout)
            if not alone:
                gate.share()
            marks[name] = time.monotonic()

        def let_go(name: str) -> None:
            if not alone:
                gate.free()
            marks[name] = time.monotonic()

        if alone:
            gate.exclude()
        hold("shared")
        prepared: Prepared | None = None
        try:
            prepared = self.prepare()
            payload, refs, model, first = prepared.payload, prepared.refs, prepared.model, prepared.first
            marks["prepared"] = time.monotonic()
            if self.is_cuda and self.reference_timing is None:
                self.warm_reference(first, model)
                marks["compiled reference"] = time.monotonic()
            let_go("freed")
            jobdir = Path(tempfile.mkdtemp(prefix="foundry-job-", dir=self.config.workdir or job_root()))
            try:
                (jobdir / "candidate.py").write_text(candidate.source)
                jobfiles.save(payload, jobdir / "job.pt")
                marks["saved"] = time.monotonic()
                job = {
                    "device": "cuda" if self.is_cuda else "cpu",
                    "processes": self.is_cuda or not self.config.process_sandbox,
                    "default_trials": self.trials,
                    "gpu_memory_fraction": self.child_memory_fraction(prepared, alone),
                    "static_compile": self.config.static_compile,
                    "tf32": self.tf32,
                    "after_trials": self.after_trials,
                    "inputs": prepared.described,  # shapes, strides and dtypes only (the compile ahead's)
                    "reweighted": prepared.reweighted,
                    "modes": prepared.modes,
                    "gradients": [{k: g[k] for k in GRADIENT_SPEC} for g in prepared.gradients] or None,
                    "init_draws": init_state.INIT_DRAWS if self.operator.spec.training else 0,
                    "init_sample": init_state.INIT_SAMPLE,
                    "timing": {
                        "trials": self.config.timing_trials,
                        "warmup": self.config.timing_warmup,
                        "rotate": self.config.timing_rotate,
                        "training": bool(prepared.gradients),
                        "after_gradients": [{k: prepared.after_gradient[k] for k in GRADIENT_SPEC}]
                        if prepared.after_gradient is not None
                        else None,
                    },
                }
                if prepared.descriptors:
                    job["exchange"] = prepared.descriptors
                settings = json.dumps(job)
                (jobdir / "job.json").write_text(settings)
                digest = jobfiles.digest(candidate.source.encode(), settings.encode())
                judged: dict[str, Any] = {}
                child_stages: list[Any] = []
                compiled, tampered = None, None
                after_checked, stale = False, None

                def ready() -> None:  # the candidate is built: only now its trials' inputs exist for it
                    marks["loaded"] = time.monotonic()
                    jobfiles.write_trials(prepared.sent, jobdir)
                    hold("held")

                def decide(message: dict[str, Any]) -> bool:
                    marks["written"] = time.monotonic()
                    child_stages.extend(child_marks(message.get("stages")))
                    hold("held again")
                    judged.update(self.judge(message, jobdir, prepared))
                    marks["judged"] = time.monotonic()
                    if isinstance(message.get("peak_bytes"), int):
                        gib = total_memory(self.device_index) / 2**30
                        log.debug(
                            "%s: worker peak %.2f GiB of device memory (cap %.2f of %.0f), evaluator holds %.2f GiB",
                            candidate.id,
                            message["peak_bytes"] / 2**30,
                            job["gpu_memory_fraction"] * gib,
                            gib,
                            prepared.held_bytes() / 2**30,
                        )
                    go = not judged["failures"] and self.timing_available
                    if go:
                        gate.exclude()
                        marks["exclusive"] = time.monotonic()
                        from foundry.evaluate.roofline import ceilings

                        with torch.cuda.device(self.device_index):
                            self.reference(first, model)  # once per evaluator, alone on the device
                            ceilings(self.device_index or 0, trial_dtype(first))  # once per process
                    else:
                        let_go("freed again")
                    return go

                def timed(message: dict[str, Any]) -> None:
                    marks["measured"] = time.monotonic()

                correctness, timing_msg, outcome = run_child(
                    jobdir,
                    timeout_s=self.timeout_s,
                    memory_mb=self.config.memory_mb if self.device == "cpu" else None,
                    env=self.env,
                    decide=decide,
                    pool=self.pool,
                    timed=timed,
                    ready=ready,
                    ran=lambda: let_go("ran"),
                    after_ran=lambda: let_go("after ran"),
                    digest=digest,
                    fds=prepared.shared.handover() if prepared.shared is not None else [],
                )
                if timing_msg is not None and not timing_msg.get("error"):
                    after = timing_msg.get("after")
                    if after is not None and after.get("error") is None:
                        marks["after written"] = time.monotonic()
                        hold("held after")  # loaded onto the device and compared there
                        outputs = self.worker_outputs(jobdir / "outputs_after_timing.pt")
                        shared = delivered(after.get("delivered"), prepared.after, len(outputs))
                        stale = self.check_after_timing(outputs, refs[: self.after_trials], shared, prepared.selections)
                        if stale is None and prepared.after_gradient is not None:
                            stale = self.check_gradients_after_timing(after, jobdir, prepared)
                    else:  # it failed, or died, when called again after the timing run
                        stale = self.child_failure(after, outcome).model_copy(update={"stage": Stage.TIMING})
                    after_checked = True
                gate.release()
                marks["done"] = time.monotonic()
                log_stages(candidate.id, marks, child_stages)
                if (seconds := slow_compile(child_stages)) is not None:
                    log.info("%s took %.0f s to compile (genes %s)", candidate.id, seconds, candidate.genes or "-")
                if correctness is not None:  # on every device: what the candidate's process left in its job
                    tampered = job_dir_changed(jobdir, candidate.source)
                if (
                    self.config.static_compile
                    and self.device == "cpu"
                    and judged
                    and not judged["failures"]
                    and not tampered
                ):
                    assert correctness is not None
                    compiled = self.compile_statically(
                        jobdir, candidate.source, correctness.get("launch_signatures", {})
                    )
            finally:
                if not self.config.keep_jobs:
                    shutil.rmtree(jobdir, ignore_errors=True)
        finally:
            if prepared is not None:
                prepared.close()  # the worker has been reaped (run_child returned or raised)
            gate.release()
        if correctness is not None and (correctness.get("error") or {}).get("rule") == "exchange_failed":
            log.warning("%s; sending trials through files from now on", correctness["error"]["message"])
            self.exchanging = False
            return self.run_isolated(candidate, warnings, started, alone)
        if correctness is None or correctness.get("error") is not None:
            return self.verdict(candidate, [self.child_failure(correctness, outcome)], warnings, started)
        failures: list[Diagnosis] = judged["failures"]
        warnings = warnings + self.probe_warnings()
        facts = [KernelFacts(**k) for k in correctness.get("kernels", [])]
        checks = judged["checks"]

        def conclude(failed: list[Diagnosis], timing: Timing | None = None) -> Verdict:
            # reads warnings, checks and facts as they stand when called
            return self.verdict(
                candidate,
                failed,
                warnings,
                started,
                checks=checks,
                facts=facts,
                timing=timing,
                launches=judged["launches"],
                library=judged["library"],
            )

        if failures:
            return conclude(failures)
        if tampered is not None:
            return conclude([tampered])
        if compiled is not None:
            facts, compile_failure, compile_warnings = compiled
            warnings = warnings + compile_warnings
            if compile_failure is not None:
                return conclude([compile_failure])
            checks = checks + ["compiles for sm_90 (static)"]
        if after_checked:
            if stale is not None:
                return conclude([stale])
            checks = checks + ["outputs still correct after the timing run"]
        timing, timing_failure, facts = self.timing(timing_msg, outcome, [first], model, facts)
        if timing_failure is not None:
            return conclude([timing_failure])
        return conclude([], timing)

    def judge(self, message: dict[str, Any], jobdir: Path, prepared: Prepared) -> dict[str, Any]:
        refs, containers = prepared.refs, prepared.containers
        calls = message["calls"] if isinstance(message.get("calls"), list) else []
        outputs = self.worker_outputs(jobdir / "outputs.pt")
        failures: list[Diagnosis] = []
        plan = exchange.call_plan(self.trials, len(refs), prepared.reweighted)
        reported, plain_at = exchange.without_plain([(c.get("label"), c.get("trial")) for c in calls])
        if reported != plan or plain_at is None or len(outputs) != len(calls):
            failures.append(
                Diagnosis(
                    stage=Stage.RUN,
                    kind=FailureKind.CRASH,
                    rule="call_plan",
                    message=f"the worker reported {len(calls)} calls and {len(outputs)} outputs, not the "
                    f"{len(plan)} calls of the plan in order and one plain call",
                )
            )
            return {"failures": failures, "checks": [], "launches": 0, "library": []}
        planned = [c for i, c in enumerate(calls) if i != plain_at]
        shared = delivered([c.get("delivered") for c in planned], prepared.calls, len(planned))
        shared.insert(plain_at, None)  # the plain call's outputs come through the outputs file
        checks: list[str] = []
        tolerances = self.probe_tolerances or []
        state_kinds = {
            "repeat": "when called again on the same inputs",
            "moved": "when the same inputs sit at other addresses",
            "rewrite": "when new inputs are written into the same buffers",
            "fresh": "on new inputs after all other calls",
            "reweighted": "when the parameters were changed in place (a kernel kept values derived from them)",
            "reassigned": "when the parameters were replaced by new objects, as load_state_dict(assign=True) or "
            "weight tying do, 4-d and 5-d ones channels-last as Module.to(memory_format=torch.channels_last) leaves "
            "them (a kernel kept the old parameter objects, or read a weight as contiguous)",
            exchange.PLAIN: "when the memory it allocates holds finite values, as reused memory does in use (checked "
            "calls fill it with NaN: a kernel that reads its uninitialised buffers tells them apart)",
        }
        modes = (("train", "in train mode"), ("requires_grad", "on inputs that require grad"))
        used = [what for mode, what in modes if prepared.modes.get(mode)]
        if used:  # worker.run: those calls run as modules are used
            for label in ("moved", "fresh"):
                state_kinds[label] += f", {' and '.join(used)}"
        order = [c for c in range(len(calls)) if c != plain_at] + [plain_at]  # a result never written reads as
        # NaN on the planned calls (incomplete_output): the plain call, where it reads as a mismatch, comes last
        for c in order:
            call, mapped, on_device = calls[c], outputs[c], shared[c]
            out = self.onto_device(mapped, on_device)  # one call's outputs on the device at a time
            label, trial = call["label"], call["trial"]
            expected = refs[trial]
            what = f"trial {trial}" if label == "trial" else f"{label} call (expects trial {trial})"
            note = prepared.notes[trial] if trial < len(prepared.notes) else ""
            what += f" ({note})" if note and label == "trial" else ""
            what += ", grad enabled" if exchange.grad_enabled(c) else ""
            what += ", under torch.inference_mode" if call.get("inference") else ""
            container = containers[trial] if trial < len(containers) else None
            own = label == "trial" or label == "reweighted"  # judged relative to the trial's own outputs
            judged_with = prepared.tolerances.get(trial, tolerances) if own else tolerances
            if trial in prepared.class_slacks:
                judged_with = with_slacks(judged_with, prepared.class_slacks[trial])
            chosen = prepared.selections[trial] if trial < len(prepared.selections) else {}
            diag = self.check_call(call, out, expected, judged_with, what, label, state_kinds, container, chosen)
            if diag is not None:
                failures.append(diag)
                break
        else:
            checks += [
                "output types",
                "shapes/dtypes/strides",
                "no aliasing",
                "inputs unmodified",
                "full coverage (NaN poison)",
                "allocations holding finite values (one plain call)",
                f"{len([c for c in calls if c['label'] == 'trial'])} trials within tolerance",
                "independent of call count and buffer addresses",
                "grad enabled and disabled",
            ]
            if any(c.get("inference") for c in calls):
                checks.append("one call under torch.inference_mode")
            last = len(refs) - 1 if prepared.reweighted else len(refs)
            transformed = [  # a scale factor by its band (its secret part stays out of the verdict)
                re.sub(r"^inputs x([0-9.e+-]+)$", lambda m: f"inputs x~1e{round(math.log10(float(m[1]))):+d}", note)
                for note in (prepared.notes[t] for t in sorted(prepared.tolerances) if t != last)
                if note
            ]
            if transformed:
                checks.append(f"transformed inputs ({'; '.join(transformed)})")
            if prepared.reweighted:
                checks.append("parameters changed in place, then replaced by new objects")
            if self.probe_notes:
                checks.append("trivial-answer probes (check strengthened)")
            else:
                checks.append("trivial-answer probes")
        library: set[str] = set()
        launches = sum(c["launches"] for c in calls)
        gradient_records: list[dict[str, Any]] = []
        if not failures and prepared.gradients:
            diag, gradient_records = self.check_gradients(message, jobdir, prepared)
            if diag is not None and diag.rule == "double_backward":  # a policy on use: library compute first
                diag = self.runtime_guard(calls + gradient_records, set(), prepared.work) or diag
            if diag is not None:
                failures.append(diag)
            else:
                checks.append(
                    f"gradients of inputs and parameters ({len(prepared.gradients)} random upstream gradients)"
                )
        if not failures:
            guard = self.runtime_guard(calls + gradient_records, library, prepared.work)
            if guard is not None:
                failures.append(guard)
            else:
                checks += ["Triton launch on every call", f"runtime guard ({self.policy})"]
        if not failures and self.operator.spec.training:
            diag = self.check_initial_state(jobdir)
            if diag is not None:
                failures.append(diag)
            else:
                checks.append(f"initial state as the reference's initialisers make it ({init_state.INIT_DRAWS} builds)")
        return {"failures": failures, "checks": checks, "launches": launches, "library": sorted(library)}

    @functools.cached_property
    def init_sizes(self) -> list[str]:
        """The constructor arguments a training candidate's initial state is judged at: the checked ones, and the
        operator's full ones too where they differ and their state holds at most init_state.FULL_STATE elements (an
        init that switches on the layer's size is right at the small size only); through reset_parameters where the
        reference writes state there; and on a GPU, each of the checked ones also made on the device (an init that
        keys on where its tensors live is right on the CPU only). Once per evaluator: it depends on the operator and
        the device alone."""
        op = self.operator
        sizes = ["checked"]
        if self.small:
            try:
                with torch.device("meta"):
                    full = op.build(False).state_dict()
            except Exception:  # noqa: BLE001 - the full size does not build on meta: judged at the checked size
                full = None
            same = repr(op.init_inputs(False)) == repr(op.init_inputs(True))
            if full is not None and not same and sum(t.numel() for t in full.values()) <= init_state.FULL_STATE:
                sizes.append("full")
        if self.reset_state(1):  # the reference's reset_parameters make some of its state: judged on that path too
            sizes.append("reset")
        if self.is_cuda:
            sizes += ["device", "reset-device"] if "reset" in sizes else ["device"]
        return sizes

    def reset_state(self, builds: int, device: str = "cpu") -> list[dict[str, torch.Tensor]]:
        """`builds` state dicts of the reference at the checked arguments as deferred initialisation makes them
        (worker.reset_build, materialised on `device`), on the CPU, each holding only the keys some reset_parameters()
        wrote (the others stay as to_empty left them: nothing to judge); empty where it writes none, or the reference
        cannot take that path."""
        init = self.operator.init_inputs(self.small)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(secrets.randbits(62))
            try:
                states = [
                    tensors_to(reset_build(self.operator.model_cls, init, torch, device).state_dict(), "cpu")
                    for _ in range(builds)
                ]
            except Exception:  # noqa: BLE001 - no meta-device build of the reference: nothing to compare with
                return []
        written = [k for k, t in states[0].items() if t.numel() and not init_state.unwritten(t)]
        return [{k: state[k] for k in written} for state in states] if written else []

    @functools.cached_property
    def starting_modes(self) -> list[bool]:
        """The training flags the reference's modules start with, as a sorted list of the distinct values. Once per
        evaluator: it depends on the operator alone."""
        with torch.random.fork_rng(devices=[]):
            built = self.operator.build(self.small)
        return sorted({bool(m.training) for m in built.modules()})

    def check_initial_state(self, jobdir: Path) -> Diagnosis | None:
        """A training operator's candidate as its constructor builds it (worker.initial_states) against as many
        builds of the reference, on fresh secret seeds (init_state.initial_state), at each of init_sizes."""
        try:
            reported = jobfiles.load_untrusted(jobdir / "initial_state.pt", "cpu", mapped=False)
        except Exception as exc:  # noqa: BLE001 - whatever the candidate left there, it is no initial state
            log.warning("refused the worker's initial_state.pt: %s: %s", type(exc).__name__, str(exc)[:300])
            reported = None
        sizes = self.init_sizes
        if not isinstance(reported, dict) or sorted(reported) != sorted(sizes):
            return init_state.initial_state([{}], None)
        for size in sizes:
            if size in ("reset", "reset-device"):
                if isinstance(reported[size], str):
                    return init_state.refused(
                        "built on the meta device and materialised by to_empty and reset_parameters(), as the "
                        f"reference can be (deferred initialisation, FSDP), it raised {reported[size]}"
                    )
                # a key the candidate leaves as to_empty did (NaN) fails loudly in use (a NaN loss at the first step):
                # judged are the keys it writes, which must start as the reference's reset_parameters() make them
                left = init_state.unwritten_keys(reported[size])
                reset = self.reset_state(init_state.INIT_DRAWS, self.device if size == "reset-device" else "cpu")
                builds = [{k: v for k, v in b.items() if k not in left} for b in reset]
                if not builds:
                    continue
            else:
                started = reported[size].get("training")
                if size == "checked" and (modes := self.starting_modes) != started:
                    return init_state.refused(
                        f"its modules start in {mode_name(started)} where the reference's start in {mode_name(modes)} "
                        "(a module built in eval mode never updates its batch statistics or draws its dropout until "
                        "someone calls .train())"
                    )
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(secrets.randbits(62))
                    small = self.small and size != "full"
                    with torch.device(self.device if size == "device" else "cpu"):
                        builds = [self.operator.build(small).state_dict() for _ in range(init_state.INIT_DRAWS)]
                    builds = [tensors_to(b, "cpu") for b in builds]
            refused = init_state.initial_state(builds, reported[size])
            if refused is not None:
                what = {
                    "full": "the operator's full constructor arguments",
                    "reset": "the checked arguments on the meta device, then to_empty and every reset_parameters()",
                    "device": f"the checked arguments under torch.device({self.device!r})",
                    "reset-device": "the checked arguments on the meta device, then to_empty onto "
                    f"{self.device!r} and every reset_parameters()",
                }.get(size, "the checked arguments")
                return refused.model_copy(update={"message": f"built with {what}: {refused.message}"})
        return None

    def worker_outputs(self, path: Path) -> list[Any]:
        """A worker's outputs file, per call a list of tensors (or None where the outputs were not plain
        tensors). On a GPU the file is mapped, and each call's outputs go onto the device when they are
        judged (onto_device): with several candidates judged at once, all their calls' outputs at full
        size would not fit beside the workers. On the CPU they are copied out of the file as it is read.
        The file is the candidate's to change (it ran beside it): read without following a link, only a regular
        file of bounded size, weights_only (a pickle never runs here). A file refused, or not a list of calls'
        outputs, is no outputs at all: the call plan (or the check after timing) rejects the candidate."""
        try:
            outputs = jobfiles.load_untrusted(path, "cpu", mapped=self.is_cuda)
        except Exception as exc:  # noqa: BLE001 - whatever the candidate left there, it is not outputs
            log.warning("refused the worker's %s: %s: %s", path.name, type(exc).__name__, str(exc)[:300])
            return []
        if not isinstance(outputs, list) or not all(
            o is None or (isinstance(o, list) and all(isinstance(t, torch.Tensor) for t in o)) for o in outputs
        ):
            log.warning("refused the worker's %s: not a list of calls' outputs", path.name)
            return []
        return outputs

    def onto_device(
        self, out: list[torch.Tensor] | None, shared: list[torch.Tensor] | None = None
    ) -> list[torch.Tensor] | None:
        """One call's outputs on the device: the shared buffers the worker delivered them to, else copied from
        the mapped file (the copy is what is judged, so a file changed afterwards changes nothing)."""
        if shared is not None:
            return shared
        if out is None or not self.is_cuda:
            return out
        return to_device(out, self.device)

    def check_call(
        self,
        call: dict[str, Any],
        out: list[torch.Tensor] | None,
        expected: list[torch.Tensor],
        tolerances: list[Tolerance],
        what: str,
        label: str,
        state_kinds: dict[str, str],
        container: str | None,
        selections: dict[int, Selection] | None = None,
    ) -> Diagnosis | None:
        info = call["output"]
        types = [item["type"] for item in info["items"]]
        if out is None or any(t != "torch.Tensor" for t in types):
            return Diagnosis(
                stage=Stage.CORRECTNESS,
                kind=FailureKind.OUTPUT_TYPE,
                rule="plain_tensor",
                message=f"{what}: outputs must be plain torch.Tensor, got {', '.join(types)}",
            )
        if container is not None and info["container"] != container:
            return Diagnosis(
                stage=Stage.CORRECTNESS,
                kind=FailureKind.OUTPUT_TYPE,
                rule="output_container",
                message=f"{what}: forward returned a {info['container']}, the reference a {container}",
            )
        if len(out) != len(expected):
            return Diagnosis(
                stage=Stage.CORRECTNESS,
                kind=FailureKind.OUTPUT_TYPE,
                rule="output_count",
                message=f"{what}: {len(out)} outputs, expected {len(expected)}",
            )
        for k, item in enumerate(info["items"]):
            if item.get("overlapping"):
                return Diagnosis(
                    stage=Stage.CORRECTNESS,
                    kind=FailureKind.SHAPE_MISMATCH,
                    rule="stride",
                    message=f"{what}: output {k} has stride 0 (a broadcast view, not a result): "
                    f"strides {item['stride']}",
                )
            if item.get("aliases"):
                return Diagnosis(
                    stage=Stage.CORRECTNESS,
                    kind=FailureKind.ALIASING,
                    rule="aliasing",
                    message=f"{what}: output {k} shares memory with {', '.join(item['aliases'])}",
                )
        if call.get("mutated_state"):
            return Diagnosis(
                stage=Stage.CORRECTNESS,
                kind=FailureKind.STATE_DEPENDENT,
                rule="state_unmodified",
                message=f"{what}: forward changed the module's state: {', '.join(call['mutated_state'][:5])} "
                "(a kernel keeps state between calls)",
            )
        if call.get("clobbered_previous"):
            return Diagnosis(
                stage=Stage.CORRECTNESS,
                kind=FailureKind.ALIASING,
                rule="output_reuse",
                message=f"{what}: this call overwrote the previous call's output (outputs share memory)",
            )
        if call["mutated_inputs"]:
            return Diagnosis(
                stage=Stage.CORRECTNESS,
                kind=FailureKind.INPUT_MUTATION,
                rule="inputs_unmodified",
                message=f"{what}: the candidate modified input(s) {call['mutated_inputs']}",
            )
        kind = FailureKind.MISMATCH if label == "trial" else FailureKind.STATE_DEPENDENT
        for k, (o, r) in enumerate(zip(out, expected, strict=True)):
            tol = tolerances[k] if k < len(tolerances) else self.tolerance
            diag = compare_output(o, r, tol, (selections or {}).get(k), kind=kind, what=f"{what}, output {k}")
            if diag is not None:
                if label == exchange.PLAIN:
                    diag = diag.model_copy(
                        update={
                            "rule": "finite_allocations",
                            "message": f"result wrong {state_kinds[label]}: {diag.message}",
                            "kind": FailureKind.MISMATCH,
                        }
                    )
                elif label != "trial":
                    diag = diag.model_copy(
                        update={
                            "rule": f"state:{label}",
                            "message": f"result changed {state_kinds[label]}: {diag.message}",
                            "kind": FailureKind.STATE_DEPENDENT,
                        }
                    )
                return diag
        return None

    def check_after_timing(
        self,
        outputs: list[list[torch.Tensor] | None],
        refs: list[list[torch.Tensor]],
        shared: list[list[torch.Tensor] | None] | None = None,
        selections: list[dict[int, Selection]] | None = None,
    ) -> Diagnosis | None:
        """The candidate, called again on known inputs after the whole timing run, must still be right
        (refs: those of the trials it was asked to call again; shared: per call, the device buffers the worker
        delivered its outputs to, else None and the outputs are in the file's entry)."""

        def stale(message: str, evidence: Diagnosis | None = None) -> Diagnosis:
            update = {"stage": Stage.TIMING, "kind": FailureKind.STATE_DEPENDENT, "rule": "state:after_timing"}
            if evidence is not None:  # a mismatch keeps its statistics
                return evidence.model_copy(update=update | {"message": message})
            return Diagnosis(message=message, **update)

        tolerances = self.probe_tolerances or []
        if len(outputs) != len(refs):
            returned = f"{len(outputs)} trial(s) of outputs, not {len(refs)}"
            return stale(f"after the timing run the worker returned {returned}")
        for t, mapped in enumerate(outputs):
            out = self.onto_device(mapped, shared[t] if shared is not None and t < len(shared) else None)
            if out is None or len(out) != len(refs[t]):
                return stale(f"after the timing run, trial {t}'s outputs are no longer plain tensors")
            chosen = selections[t] if selections is not None and t < len(selections) else {}
            for k, (o, r) in enumerate(zip(out, refs[t], strict=True)):
                tol = tolerances[k] if k < len(tolerances) else self.tolerance
                diag = compare_output(
                    o, r, tol, chosen.get(k), kind=FailureKind.STATE_DEPENDENT, what=f"trial {t}, output {k}"
                )
                if diag is not None:
                    return stale(f"result changed after many calls (the timing run): {diag.message}", diag)
        return None

    def runtime_guard(
        self, calls: list[dict[str, Any]], library: set[str], work: list[dict[str, int]] | None = None
    ) -> Diagnosis | None:
        for call in calls:
            what = f"{call['label']} call {call['trial']}" if call.get("trial") is not None else call["label"]
            if call["launches"] == 0:
                return Diagnosis(
                    stage=Stage.RUNTIME_GUARD,
                    kind=FailureKind.RUNTIME_GUARD,
                    rule="no_triton_launch",
                    message=f"{what}: launched no Triton kernel",
                )
            outside = {op: n for op, n in call["ops"].items() if not self.granted(rule_name(op))}
            if outside:
                listing = ", ".join(f"{op}×{n}" for op, n in sorted(outside.items()))
                return Diagnosis(
                    stage=Stage.RUNTIME_GUARD,
                    kind=FailureKind.RUNTIME_GUARD,
                    rule="non_triton_compute",
                    message=f"{what}: ops ran outside Triton under the {self.policy} policy: {listing}",
                    evidence=json.dumps(call["ops"], sort_keys=True),
                )
            trial = call.get("trial")
            reference_work = work[trial] if work and isinstance(trial, int) and 0 <= trial < len(work) else None
            more = self.beyond_reference(call["ops"], call.get("work"), reference_work)
            if more:
                return Diagnosis(
                    stage=Stage.RUNTIME_GUARD,
                    kind=FailureKind.RUNTIME_GUARD,
                    rule="non_triton_compute",
                    message=f"{what}: library ops ran more often, or did more work, than one call of the reference "
                    f"on the same inputs (the hybrid grant is the reference's own library work): {more}",
                    evidence=json.dumps(call["ops"], sort_keys=True),
                )
            if call.get("foreign_streams"):
                return escaped_stream(what, call["foreign_streams"])
            if call.get("violations"):
                rule, message = describe_violations(call["violations"])
                return Diagnosis(
                    stage=Stage.RUNTIME_GUARD, kind=FailureKind.RUNTIME_GUARD, rule=rule, message=f"{what}: {message}"
                )
            library |= {found for op in call["ops"] if (found := self.library_name(rule_name(op))) is not None}
            if call["threads"] > 0:
                return Diagnosis(
                    stage=Stage.RUNTIME_GUARD,
                    kind=FailureKind.RUNTIME_GUARD,
                    rule="threads",
                    message=f"{what}: forward left {call['threads']} extra thread(s) running",
                )
            if not call.get("poisoned"):
                return Diagnosis(
                    stage=Stage.RUNTIME_GUARD,
                    kind=FailureKind.RUNTIME_GUARD,
                    rule="harness_tampering",
                    message=f"{what}: forward switched off the harness's memory poisoning",
                )
        return None

    def beyond_reference(
        self,
        ops: dict[str, int],
        work: Any = None,
        reference_work: dict[str, int] | None = None,
        reference_counts: dict[str, int] | None = None,
    ) -> str:
        """The granted library ops (not those the operator's file declares) one candidate call ran more often
        than one reference call does, as "op×n (reference ×m)", or with more work (runtime_guard.op_work: FLOPs,
        or output elements) than the reference's call on the same trial, as "op work w (reference v)"; empty
        when none: a grant by name, or by count, would let a candidate move other work (a matrix product as
        extra output channels of the one convolution) into a granted op."""
        counted: dict[str, int] = {}
        done: dict[str, int] = {}
        work = work if isinstance(work, dict) else {}
        for op, n in ops.items():
            name = rule_name(op)
            if self.library_name(name) is not None and self.library_name(name) not in self.operator.spec.hybrid_ops:
                counted[name] = counted.get(name, 0) + n
                w = work.get(op, 0)
                done[name] = done.get(name, 0) + (w if isinstance(w, int) else 0)
        limits = reference_counts if reference_counts is not None else self.reference_counts
        found = [
            f"{name}×{n} (reference ×{limits.get(name, 0)})"
            for name, n in sorted(counted.items())
            if n > limits.get(name, 0)
        ]
        if reference_work is not None:
            found += [
                f"{name} work {w} (reference {reference_work.get(name, 0)})"
                for name, w in sorted(done.items())
                if w > reference_work.get(name, 0)
            ]
        return ", ".join(found)

    def child_failure(self, message: dict[str, Any] | None, outcome: ChildOutcome) -> Diagnosis:
        tail = outcome.output_tail
        if outcome.flooded:
            return Diagnosis(
                stage=Stage.RUN,
                kind=FailureKind.OUTPUT_FLOOD,
                rule="output_cap",
                message=f"the candidate printed more than {outcome.output_bytes} bytes; killed",
                evidence=tail,
            )
        if outcome.timed_out:
            return Diagnosis(
                stage=Stage.RUN,
                kind=FailureKind.TIMEOUT,
                rule="timeout",
                message=f"no verdict within {self.timeout_s:g} s; killed",
                evidence=tail,
            )
        tail = scrub(tail)
        if message is not None and message.get("error"):
            error = {k: scrub(v) if isinstance(v, str) else v for k, v in message["error"].items()}
            stage = Stage.LOAD if message.get("stage") == "load" else Stage.RUN
            return Diagnosis(
                stage=stage,
                kind=FailureKind(error["kind"]),
                rule=error.get("rule") or "raised",
                message=error["message"],
                line=error.get("line"),
                evidence=error.get("evidence", ""),
            )
        rc = outcome.returncode
        if rc is not None and rc < 0:
            name = describe_signal(rc)
            kind = FailureKind.OOM if name == "SIGKILL" else FailureKind.CRASH
            hint = " (killed: out of memory?)" if kind is FailureKind.OOM else ""
            return Diagnosis(
                stage=Stage.RUN,
                kind=kind,
                rule="signal",
                message=f"the candidate's process died of {name}{hint}",
                evidence=tail,
            )
        return Diagnosis(
            stage=Stage.RUN,
            kind=FailureKind.EARLY_EXIT,
            rule="no_verdict",
            message=f"the candidate's process exited with code {rc} before reporting",
            evidence=tail,
        )

    def compile_statically(
        self, jobdir: Path, source: str, signatures: dict[str, Any]
    ) -> tuple[list[KernelFacts], Diagnosis | None, list[Diagnosis]]:
        """Compile the launched kernels for sm_90 in another isolated child (no interpreter there), once the job
        directory was found unchanged (job_dir_changed). After the worker ran, that directory is the candidate's:
        the compile runs in a fresh directory the evaluator makes and writes itself (O_EXCL|O_NOFOLLOW), removed
        afterwards; nothing of the job directory is read or run."""
        from foundry.evaluate.isolation import Child
        from foundry.evaluate.static_compile import MAX_SHARED_BYTES

        raw = json.dumps(signatures)
        compile_dir = Path(tempfile.mkdtemp(prefix="foundry-compile-", dir=jobdir.parent))  # 0700, a new name
        try:
            jobfiles.write_new(compile_dir, "candidate.py", source.encode())
            jobfiles.write_new(compile_dir, "signatures.json", raw.encode())
            env = {k: v for k, v in self.env.items() if k != "TRITON_INTERPRET"}
            child = Child(
                compile_dir,
                timeout_s=self.timeout_s,
                memory_mb=self.config.memory_mb,
                env=env,
                module="foundry.evaluate.static_compile",
                digest=jobfiles.digest(source.encode(), raw.encode()),
            )
            message = child.wait_message("compile")
            outcome = child.finish()
        finally:
            if not self.config.keep_jobs:
                shutil.rmtree(compile_dir, ignore_errors=True)
        if message is None or message.get("error"):
            diag = self.child_failure(message, outcome)
            return [], diag.model_copy(update={"stage": Stage.COMPILE}), []
        facts: list[KernelFacts] = []
        warnings: list[Diagnosis] = []
        failure: Diagnosis | None = None
        for raw in message["kernels"]:
            error = scrub(raw.pop("error", None) or "") or None
            facts.append(KernelFacts(**raw))
            if error and failure is None:
                failure = Diagnosis(
                    stage=Stage.COMPILE,
                    kind=FailureKind.COMPILE_ERROR,
                    rule="sm90_compile",
                    message=f"kernel {raw['name']} runs under the interpreter but does not compile for sm_90: {error}"[
                        :600
                    ],
                    evidence=error,
                )
            shared = raw.get("shared_bytes") or 0
            if shared > MAX_SHARED_BYTES and failure is None:
                failure = Diagnosis(
                    stage=Stage.COMPILE,
                    kind=FailureKind.RESOURCE_LIMIT,
                    rule="shared_memory",
                    message=f"kernel {raw['name']} needs {shared} bytes of shared memory; "
                    f"sm_90 allows {MAX_SHARED_BYTES}",
                    metrics={"shared_bytes": shared},
                )
            if raw.get("spills"):
                warnings.append(
                    Diagnosis(
                        stage=Stage.COMPILE,
                        kind=FailureKind.RESOURCE_LIMIT,
                        rule="spills",
                        message=f"kernel {raw['name']} spills {raw['spills']} bytes to local "
                        f"memory ({raw.get('registers')} registers)",
                        metrics={"spills": raw["spills"], "registers": raw.get("registers") or 0},
                    )
                )
        return facts, failure, warnings

    def probe_warnings(self) -> list[Diagnosis]:
        return [
            Diagnosis(stage=Stage.CORRECTNESS, kind=FailureKind.MISMATCH, rule="trivial_probe", message=note)
            for note in self.probe_notes
        ]

    # -- timing -----------------------------------------------------------------------------------

    def timing(
        self,
        message: dict[str, Any] | None,
        outcome: ChildOutcome,
        trials: list[list[Any]],
        model: nn.Module,
        facts: list[KernelFacts],
    ) -> tuple[Timing, Diagnosis | None, list[KernelFacts]]:
        if not self.timing_available:
            return Timing(measured=False, reason=NOT_MEASURED, device=self.device_name), None, facts
        if message is None or message.get("error"):
            diag = self.child_failure(message, outcome)
            return (
                Timing(measured=False, reason="timing failed"),
                diag.model_copy(update={"stage": Stage.TIMING}),
                facts,
            )
        facts = [KernelFacts(**k) for k in message.get("kernels", [])] or facts
        if message.get("foreign_streams"):
            return (
                Timing(measured=False, reason="timing anomaly"),
                escaped_stream("timing", message["foreign_streams"], Stage.TIMING),
                facts,
            )
        if message["escaped"] or message.get("train_escaped"):
            return (
                Timing(measured=False, reason="timing anomaly"),
                Diagnosis(
                    stage=Stage.TIMING,
                    kind=FailureKind.TIMING_ANOMALY,
                    rule="work_escapes_stream",
                    message=f"events span {message['event_span_ms']:.3f} ms but the device was busy "
                    f"{message['wall_ms']:.3f} ms: work escaped the timed stream",
                ),
                facts,
            )
        ref = self.reference(trials[0], model)
        from foundry.evaluate.roofline import roofline

        log.debug(
            "timed %.4f ms with the host's time masked (plain pass %s ms; the host enqueues a call in %s ms)",
            message["median_ms"],
            message.get("plain_median_ms"),
            message.get("host_ms"),
        )

        roof = roofline(
            ref.bytes_moved, ref.flops, message["median_ms"], self.device_index or 0, trial_dtype(trials[0])
        )
        timing = Timing(
            measured=True,
            device=self.device_name,
            trials=message["trials"],
            candidate_ms=message["median_ms"],
            host_ms=message.get("host_ms"),
            eager_ms=ref.eager_ms,
            compile_ms=ref.compile_ms,
            roofline=roof,
            baseline_notes=tuple(ref.notes),
            memory=peak_memory(message.get("peak_bytes"), ref.peak_bytes),
        )
        if message.get("train_median_ms") is not None:
            timing = timing.model_copy(
                update={
                    "training": TrainingTiming(
                        candidate_ms=message["train_median_ms"],
                        eager_ms=ref.train_ms.get("eager"),
                        compile_ms=ref.train_ms.get("compile"),
                        memory=peak_memory(message.get("train_peak_bytes"), ref.train_peak_bytes),
                    )
                }
            )
        return timing, None, facts

    def warm_reference(self, inputs: list[Any], model: nn.Module) -> None:
        """torch.compile the reference and run it once (minutes of CPU work for some operators) while
        the device is shared, so that the reference's timing run holds the device only to time."""
        with self.reference_lock:
            if self.warm is not None or self.reference_timing is not None:
                return
            compiled, failed = None, None
            try:
                compiled = torch.compile(model)
                with torch.no_grad(), torch.cuda.device(self.device_index):
                    compiled(*[x.clone() if isinstance(x, torch.Tensor) else x for x in to_device(inputs, self.device)])
                    torch.cuda.synchronize()
            except Exception as exc:  # reported with the reference's timing
                compiled, failed = None, exc
            self.warm = (model, inputs, compiled, failed)

    def reference(self, inputs: list[Any], model: nn.Module) -> ReferenceTiming:
        """Eager and torch.compile times of the reference, measured once per evaluator, in this run."""
        with self.reference_lock:
            if self.reference_timing is not None:
                return self.reference_timing
            from foundry.evaluate.roofline import count_flops, tensor_bytes
            from foundry.evaluate.timing import clone_inputs, peak_bytes, time_cuda, time_training

            cfg = self.config
            compiled, failed = None, None
            if self.warm is not None:  # compiled beforehand, while the device was shared
                model, inputs, compiled, failed = self.warm
            device_inputs = to_device(inputs, self.device)
            rotated = [clone_inputs(device_inputs) for _ in range(cfg.timing_rotate)]
            eager = time_cuda(model, rotated, trials=cfg.timing_trials, warmup=cfg.timing_warmup)
            notes: list[str] = []
            if not self.tf32:
                notes.append("eager and torch.compile ran with cuDNN TF32 off: full fp32, as the candidates must")
            compile_ms: float | None = None
            try:
                if failed is not None:
                    raise failed
                if compiled is None:  # (an OptimizedModule's truth value asks the model for len())
                    compiled = torch.compile(model)
                compile_ms = time_cuda(
                    compiled, rotated, trials=cfg.timing_trials, warmup=max(cfg.timing_warmup, 3)
                ).median_ms
            except Exception as exc:  # torch.compile failing on the user's op is a fact, not a crash
                notes.append(f"torch.compile failed on the reference: {type(exc).__name__}: {exc}"[:300])
            with torch.no_grad():
                outputs = as_outputs(model(*device_inputs))
            state = list(model.parameters()) + list(model.buffers())
            runs = {"eager": model} | ({"compile": compiled} if compile_ms is not None else {})
            peaks = {name: peak_bytes(fn, rotated[0]) for name, fn in runs.items()}
            train_ms: dict[str, float] = {}
            train_peaks: dict[str, int] = {}
            if self.operator.spec.training:  # timed as the candidate's step is (worker.train_timing)
                params = [p for p in model.parameters() if p.requires_grad]
                for name, fn in runs.items():
                    try:
                        stepped, train_peaks[name] = time_training(
                            fn, params, rotated, trials=cfg.timing_trials, warmup=max(cfg.timing_warmup, 3)
                        )
                        train_ms[name] = stepped.median_ms
                    except Exception as exc:  # noqa: BLE001 - a baseline that cannot train is a fact, not a crash
                        notes.append(f"{name} failed in a training step: {type(exc).__name__}: {exc}"[:300])
            self.reference_timing = ReferenceTiming(
                eager_ms=eager.median_ms,
                compile_ms=compile_ms,
                flops=count_flops(model, device_inputs),
                bytes_moved=sum(t.numel() * t.element_size() for t in state)
                + tensor_bytes(device_inputs)
                + tensor_bytes(outputs),
                notes=notes,
                peak_bytes=peaks,
                train_ms=train_ms,
                train_peak_bytes=train_peaks,
            )
            self.warm = None
            return self.reference_timing

    # -- verdict ----------------------------------------------------------------------------------

    def verdict(
        self,
        candidate: Candidate,
        failures: list[Diagnosis],
        warnings: list[Diagnosis],
        started: float,
        *,
        checks: list[str] | None = None,
        facts: list[KernelFacts] | None = None,
        timing: Timing | None = None,
        launches: int = 0,
        library: list[str] | None = None,
    ) -> Verdict:
        if not failures and timing is None:
            timing = Timing(measured=False, reason=NOT_MEASURED, device=self.device_name)
        if self.probe_weak and not failures:
            warnings = warnings + [
                Diagnosis(
                    stage=Stage.CORRECTNESS,
                    kind=FailureKind.MISMATCH,
                    rule="weak_check",
                    message="a trivial answer passes this operator's check: the verdict is weak",
                )
            ]
        from foundry.evaluate.isolation import describe  # the sandbox layers the candidate's process ran under

        passed = (["static guard"] if self.config.static_guard else []) + [describe(self.env)] + (checks or [])
        return Verdict(
            candidate_id=candidate.id,
            verified=not failures,
            policy=self.policy,
            device=self.device_name,
            diagnoses=tuple(failures),
            warnings=tuple(warnings),
            checks_passed=tuple(passed) if not failures or checks else (),
            trials=self.trials,
            triton_launches=launches,
            library_ops=tuple(library or ()),
            kernels=tuple(facts or ()),
            timing=timing,
            wall_s=round(time.monotonic() - started, 3),
        )


# What a job directory holds once its worker ran: the evaluator's files, the worker's outputs, the candidate's
# temporary files and Triton cache (landlock.confine), the trials file while it is written (jobfiles.write_trials).
JOB_ENTRIES = frozenset(
    {
        "candidate.py",
        "job.json",
        "job.pt",
        jobfiles.TRIALS,
        "outputs.pt",
        "outputs_after_timing.pt",
        "gradients.pt",
        "gradients_after_timing.pt",
        "initial_state.pt",
    }
    | {"tmp", "triton-cache"}
)


def job_dir_changed(jobdir: Path, source: str) -> Diagnosis | None:
    """A rejection where the candidate's process changed its job directory beyond its temporary files and cache:
    a link or other non-regular file among the evaluator's files (a link there is a write or read the evaluator
    would make elsewhere), candidate.py no longer the source that was evaluated, or a new entry (a package
    planted for a later `python -m` to import, a file for a later stage to trust). Read with lstat and
    O_NOFOLLOW only: nothing in the directory is followed."""
    found: list[str] = []
    try:
        with os.scandir(jobdir) as entries:
            for entry in entries:
                name = entry.name
                if name not in JOB_ENTRIES and not name.startswith(f".{jobfiles.TRIALS}."):
                    found.append(f"new entry {name!r}")
                elif name in ("tmp", "triton-cache"):
                    if not entry.is_dir(follow_symlinks=False):
                        found.append(f"{name} is not a directory")
                elif not entry.is_file(follow_symlinks=False):
                    found.append(f"{name} is a link or not a regular file")
        if jobfiles.read_untrusted(jobdir / "candidate.py") != source.encode():
            found.append("candidate.py is not the evaluated source")
    except (OSError, jobfiles.UntrustedFile) as exc:
        found.append(f"{type(exc).__name__}: {exc}")
    if not found:
        return None
    return Diagnosis(
        stage=Stage.RUNTIME_GUARD,
        kind=FailureKind.RUNTIME_GUARD,
        rule="job_dir_changed",
        message="the candidate's process changed the evaluator's job directory (it may write only beneath tmp/ "
        "and its Triton cache): " + "; ".join(sorted(set(found))[:6]),
    )


def geometric_mean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))
