"""GPU timing shared by the worker (candidate) and the parent (eager and torch.compile reference).

CUDA events on the current stream, the L2 cache flushed before every trial, inputs rotated among
fresh buffers, warm-up excluded, the median of many trials. The timer functions are bound when this
module is imported, before any candidate code runs, so a candidate that patches them later changes
nothing here. Imports only torch."""

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
PERF = time.perf_counter
MEDIAN = statistics.median

L2_FLUSH_BYTES = 256 * 1024 * 1024  # several times the H200's 60 MB L2
MIN_TRIALS = 30
# Work that escapes the current stream makes the stream's events end early while the device is still
# busy: event span much shorter than the wall clock up to a full synchronize. Chosen loosely, so that
# launch overhead on a busy host never trips it.
ESCAPE_RATIO = 3.0
ESCAPE_SLACK_MS = 5.0


@dataclass(frozen=True)
class TimingResult:
    median_ms: float
    trials: int
    min_ms: float
    max_ms: float
    event_span_ms: float
    wall_ms: float

    @property
    def escaped(self) -> bool:
        return self.wall_ms > ESCAPE_RATIO * self.event_span_ms + ESCAPE_SLACK_MS


def clone_inputs(inputs: Sequence[Any]) -> list[Any]:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def time_cuda(
    fn: Callable[..., Any],
    inputs: Sequence[Sequence[Any]] | Callable[[int], Sequence[Any]],
    *,
    trials: int = 50,
    warmup: int = 5,
    flush: bool = True,
) -> TimingResult:
    """Median milliseconds of fn(*inputs) over `trials` runs. `inputs` is a list of input sets to
    rotate through, or a function giving trial i's inputs (called before the trial, untimed)."""
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
    with torch.no_grad():
        for i in range(warmup):
            fn(*prepare(i))
        SYNC()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(trials)]
        wall_start = PERF()
        for i in range(trials):
            inputs_i = prepare(warmup + i)
            if scratch is not None:
                scratch.zero_()
            RECORD(starts[i])
            fn(*inputs_i)
            RECORD(ends[i])
        SYNC()
        wall_ms = (PERF() - wall_start) * 1e3
    times = [ELAPSED(s, e) for s, e in zip(starts, ends, strict=True)]
    span = ELAPSED(starts[0], ends[-1])
    return TimingResult(
        median_ms=MEDIAN(times),
        trials=trials,
        min_ms=min(times),
        max_ms=max(times),
        event_span_ms=span,
        wall_ms=wall_ms,
    )
