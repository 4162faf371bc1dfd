"""GPU timing shared by the worker (candidate) and the parent (eager and torch.compile reference).

CUDA events on the current stream, the L2 cache flushed before every trial, inputs rotated among
fresh buffers, warm-up excluded, the median of many trials. The timer functions are bound when this
module is imported, before any candidate code runs, so a candidate that patches them later changes
nothing here. Imports only torch.

Two passes over the trials. The first is the plain one (flush, start event, call, end event): its event
span against the wall clock finds work that escapes the timed stream. The second keeps the device busy
(a spin of `mask_ms`, longer than the host needs to enqueue one call) between the flush and the start
event, so that each timed interval holds the call's device work and nothing else: in the plain pass the
device, done with the flush, waits inside the interval whenever the host takes longer to enqueue the call
than the flush takes to run. Measured on the H200 (stop 22): the template's one-launch group norm needs
0.09-0.17 ms of host time per call against 0.08 ms on the device, and timed 0.080-0.126 ms in the plain
pass depending on the host's pace at that moment, 0.0800-0.0814 ms masked; torch.compile's 0.123-0.184 ms
plain, 0.125 masked. The masked median is the time; the host's enqueue time is reported beside it."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

ELAPSED = torch.cuda.Event.elapsed_time
RECORD = torch.cuda.Event.record
SYNC = torch.cuda.synchronize
# A one-thread kernel that spins for a number of clock cycles: the C function itself (torch.cuda._sleep looks
# it up on torch._C at each call, where candidate code could replace it); CPU builds have neither.
SPIN = getattr(torch._C, "_cuda_sleep", torch.cuda._sleep)
PERF = time.perf_counter
MEDIAN = statistics.median
BACKWARD = torch.autograd.backward
ENABLE_GRAD = torch.enable_grad
NO_GRAD = torch.no_grad
RANDN_LIKE = torch.randn_like
TENSOR = torch.Tensor
RESET_PEAK = torch.cuda.reset_peak_memory_stats
ALLOCATED = torch.cuda.memory_allocated
MAX_ALLOCATED = torch.cuda.max_memory_allocated

L2_FLUSH_BYTES = 256 * 1024 * 1024  # several times the H200's 60 MB L2
MIN_TRIALS = 30
# Work that escapes the current stream makes the stream's events end early while the device is still
# busy: event span much shorter than the wall clock up to a full synchronize. Chosen loosely, so that
# launch overhead on a busy host never trips it.
ESCAPE_RATIO = 3.0
ESCAPE_SLACK_MS = 5.0
MASK_MIN_MS = 0.5  # device time spun ahead of each masked trial: at least this,
MASK_HOST_FACTOR = 4.0  # and this many times the host's enqueue time in the warm-up,
MASK_MAX_MS = 20.0  # at most this,
SPIN_CYCLES_PER_MS = 3_000_000  # counted at a 3 GHz clock: at least as long on any GPU at any clock (1.98 GHz here)


@dataclass(frozen=True)
class TimingResult:
    median_ms: float  # the masked pass's median (the plain pass's where there was none)
    trials: int
    min_ms: float
    max_ms: float
    event_span_ms: float  # plain pass
    wall_ms: float  # plain pass
    plain_median_ms: float | None = None
    host_ms: float | None = None  # the host's time to enqueue one call, median of the masked pass
    mask_ms: float | None = None

    @property
    def escaped(self) -> bool:
        return self.wall_ms > ESCAPE_RATIO * self.event_span_ms + ESCAPE_SLACK_MS


def clone_inputs(inputs: Sequence[Any]) -> list[Any]:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def mask_length(host_ms: Sequence[float]) -> float:
    """Milliseconds of device time to spin ahead of each masked trial, from the host's enqueue times in the
    warm-up (the first call, which may compile, left out when there are others). The spin counts clock
    cycles, and the clocks may still be low after a light warm-up (345 MHz idle on the H200): its cycles are
    counted at SPIN_CYCLES_PER_MS, above any GPU's clock, so that it lasts at least this long."""
    steady = list(host_ms[1:]) or list(host_ms)
    need = MASK_HOST_FACTOR * MEDIAN(steady) if steady else MASK_MIN_MS
    return min(MASK_MAX_MS, max(MASK_MIN_MS, need))


def time_cuda(
    fn: Callable[..., Any],
    inputs: Sequence[Sequence[Any]] | Callable[[int], Sequence[Any]],
    *,
    trials: int = 50,
    warmup: int = 5,
    flush: bool = True,
    mask: bool = True,
) -> TimingResult:
    """Median milliseconds of fn(*inputs) over `trials` runs. `inputs` is a list of input sets to
    rotate through, or a function giving trial i's inputs (called before the trial, untimed). mask: a
    second pass with the host's enqueue time kept out of the timed intervals (the module's docstring)."""
    trials = max(trials, MIN_TRIALS)
    if callable(inputs):
        prepare = inputs
    else:
        sets = list(inputs)

        def prepare(i: int) -> Sequence[Any]:
            return sets[i % len(sets)]

    first = prepare(0)
    device = next(x.device for x in first if isinstance(x, torch.Tensor))
    scratch = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device=device) if flush else None

    def run_pass(offset: int, spin_cycles: int) -> tuple[list[float], list[float], float, float]:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
        host: list[float] = []
        wall_start = PERF()
        for i in range(trials):
            inputs_i = prepare(offset + i)
            if scratch is not None:
                scratch.zero_()
            if spin_cycles:
                SPIN(spin_cycles)
            RECORD(starts[i])
            began = PERF()
            fn(*inputs_i)
            host.append((PERF() - began) * 1e3)
            RECORD(ends[i])
        SYNC()
        wall_ms = (PERF() - wall_start) * 1e3
        times = [ELAPSED(s, e) for s, e in zip(starts, ends, strict=True)]
        return times, host, ELAPSED(starts[0], ends[-1]), wall_ms

    with torch.no_grad():
        warm_host: list[float] = []
        for i in range(warmup):
            began = PERF()
            fn(*prepare(i))
            warm_host.append((PERF() - began) * 1e3)
        SYNC()
        times, _, span, wall_ms = run_pass(warmup, 0)
        plain = MEDIAN(times)
        if not mask:
            return TimingResult(plain, trials, min(times), max(times), span, wall_ms, plain_median_ms=plain)
        mask_ms = mask_length(warm_host)
        masked, host, _, _ = run_pass(warmup + trials, int(mask_ms * SPIN_CYCLES_PER_MS))
    return TimingResult(
        median_ms=MEDIAN(masked),
        trials=trials,
        min_ms=min(masked),
        max_ms=max(masked),
        event_span_ms=span,
        wall_ms=wall_ms,
        plain_median_ms=plain,
        host_ms=MEDIAN(host),
        mask_ms=mask_ms,
    )


def training_step(fn: Callable[..., Any]) -> Callable[..., None]:
    """One training step through fn: its forward with grad enabled, then one backward from fixed upstream
    gradients (normal, drawn at the first call, a warm-up one) through every output that requires grad, as a
    loss after the operator would run it. The inputs that require grad, and the parameters, get their .grad
    (leaves: clear them between steps, untimed, as zero_grad(set_to_none=True) does)."""
    upstream: list[torch.Tensor] = []

    def step(*inputs: Any) -> None:
        with ENABLE_GRAD():
            out = fn(*inputs)
            outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, TENSOR)]
            outs = [o for o in outs if o.requires_grad]
            if not upstream:
                upstream.extend(RANDN_LIKE(o) for o in outs)
            BACKWARD(outs, upstream)

    return step


def leaves(inputs: Sequence[Any]) -> list[Any]:
    """Trial inputs as a training step gets them: floating tensors are leaves that require grad (an activation
    from the layer below), in new buffers; anything else as it is."""
    return [
        x.detach().clone().requires_grad_(True) if isinstance(x, TENSOR) and x.is_floating_point() else x
        for x in inputs
    ]


def clear_grads(inputs: Sequence[Any], params: Sequence[torch.Tensor]) -> None:
    for x in [*inputs, *params]:
        if isinstance(x, TENSOR):
            x.grad = None


def time_training(
    fn: Callable[..., Any],
    params: Sequence[torch.Tensor],
    rotated: Sequence[Sequence[Any]],
    *,
    trials: int,
    warmup: int,
    refresh: Callable[[Sequence[Any], int], None] | None = None,
) -> tuple[TimingResult, int]:
    """A training step through fn (training_step) timed as time_cuda times a call, on leaf copies of the `rotated`
    input sets (`refresh(buffers, i)` writes trial i's contents into them first, where given), their gradients and
    the parameters' cleared before each step, untimed; and the step's peak memory (peak_bytes). The worker times
    the candidate with it, the evaluator eager and torch.compile."""
    buffers = [leaves(b) for b in rotated]
    step = training_step(fn)

    def prepare(i: int) -> list[Any]:
        held = buffers[i % len(buffers)]
        if refresh is not None:
            with NO_GRAD():
                refresh(held, i)
        clear_grads(held, params)
        return held

    result = time_cuda(step, prepare, trials=trials, warmup=warmup)
    peak = peak_bytes(step, prepare(0))
    clear_grads([], params)
    return result, peak


def peak_bytes(fn: Callable[..., Any], inputs: Sequence[Any]) -> int:
    """Device bytes allocated at the peak of one call of fn (under no_grad: a training step enables grad
    itself) beyond those allocated before it: its outputs, workspaces, and for a training step the tensors
    saved for backward and the gradients."""
    SYNC()
    RESET_PEAK()
    base = ALLOCATED()
    with NO_GRAD():
        fn(*inputs)
    SYNC()
    return max(0, MAX_ALLOCATED() - base)
