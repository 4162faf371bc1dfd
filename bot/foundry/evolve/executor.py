"""Where candidates are evaluated. The loop hands a generation to an Executor and gets the verdicts
back in the same order, whatever order they finished in, so a seeded search is reproducible.

Two implementations of the Executor protocol: LocalExecutor here (the default) and RayExecutor in
evolve/ray_executor.py (`--executor ray`: actors across a Ray cluster; the only module importing ray).

LocalExecutor: a pool of evaluator slots. Every evaluator spawns one isolated child per candidate, so
concurrent evaluate() calls are safe. On CPU one evaluator takes `slots_per_evaluator` slots. On a GPU
there is one evaluator per visible GPU, taking as many slots as its `concurrency`: that many candidates
compile and run their correctness trials on the GPU at once, while the evaluator's device lock lets
only one of them (or the reference) time at a time, alone on the device.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, runtime_checkable

from foundry.core.protocols import Evaluator
from foundry.core.records import Candidate, Diagnosis, FailureKind, Stage, Verdict

log = logging.getLogger(__name__)

EVALUATOR_RETRIES = 1  # e.g. CPython 3.11's ast.parse is not thread-safe (gh-106905) in the guard


class Executor(Protocol):
    """evaluate_all returns the verdicts in the order of `candidates` and calls on_done in that order
    too (the loop records each as soon as it and all before it are known); reverify re-checks a
    finalist. Only the driver records verdicts: an executor never writes the experience library."""

    timing_available: bool
    workers: int  # candidates evaluated at once

    def evaluate_all(
        self, candidates: Sequence[Candidate], on_done: Callable[[Candidate, Verdict], None] | None = None
    ) -> list[Verdict]: ...

    def reverify(self, candidate: Candidate) -> Verdict: ...


@runtime_checkable
class Reverifying(Protocol):
    """An evaluator that can re-check a finalist with new seeds and a longer timing run."""

    def reverify(self, candidate: Candidate) -> Verdict: ...


def evaluator_failure(candidate: Candidate, exc: BaseException, policy: str = "") -> Verdict:
    """The evaluator itself raised: the candidate gets a verdict, the search goes on."""
    return Verdict(
        candidate_id=candidate.id,
        verified=False,
        policy=policy,
        device="",
        diagnoses=(
            Diagnosis(
                stage=Stage.RUN,
                kind=FailureKind.CRASH,
                message=f"the evaluator raised {type(exc).__name__}: {exc}",
                rule="evaluator_error",
            ),
        ),
    )


def timing_available(evaluator: object) -> bool:
    return bool(getattr(evaluator, "timing_available", False))


class LocalExecutor:
    def __init__(
        self,
        evaluators: Sequence[Evaluator],
        slots_per_evaluator: int = 1,
        finalist_evaluator: Evaluator | None = None,
    ) -> None:
        """finalist_evaluator re-verifies the best candidates (more trials, a longer timing run);
        without it, reverify() is a second evaluate(), which draws fresh secret seeds."""
        if not evaluators:
            raise ValueError("at least one evaluator")
        self.evaluators = list(evaluators)
        self.finalist_evaluator = finalist_evaluator
        self.timing_available = any(timing_available(e) for e in self.evaluators)
        # A timing evaluator decides how many candidates it takes at once (it never times two at once).
        self.slots: queue.Queue[Evaluator] = queue.Queue()
        counts = [
            max(int(getattr(e, "concurrency", 1)), 1) if timing_available(e) else max(slots_per_evaluator, 1)
            for e in self.evaluators
        ]
        for round_ in range(max(counts)):
            for evaluator, count in zip(self.evaluators, counts, strict=True):
                if round_ < count:
                    self.slots.put(evaluator)
        self.workers = sum(counts)

    def _evaluate(self, candidate: Candidate) -> Verdict:
        """An exception from the evaluator is the bot's failure, not the candidate's: it is retried
        (EVALUATOR_RETRIES times) before the candidate gets a verdict that says so."""
        evaluator = self.slots.get()
        try:
            for attempt in range(EVALUATOR_RETRIES + 1):
                try:
                    return evaluator.evaluate(candidate)
                except Exception as exc:  # a bug in the evaluator must not end the search
                    if attempt < EVALUATOR_RETRIES:
                        log.warning("evaluating %s raised %s: %s; retrying", candidate.id, type(exc).__name__, exc)
                        continue
                    log.exception("evaluating %s raised", candidate.id)
                    return evaluator_failure(candidate, exc)
            raise AssertionError("unreachable")
        finally:
            self.slots.put(evaluator)

    def evaluate_all(
        self, candidates: Sequence[Candidate], on_done: Callable[[Candidate, Verdict], None] | None = None
    ) -> list[Verdict]:
        if not candidates:
            return []
        if self.workers == 1 or len(candidates) == 1:
            verdicts = []
            for candidate in candidates:
                verdict = self._evaluate(candidate)
                if on_done:
                    on_done(candidate, verdict)
                verdicts.append(verdict)
            return verdicts
        with ThreadPoolExecutor(max_workers=min(self.workers, len(candidates))) as pool:
            futures = [pool.submit(self._evaluate, c) for c in candidates]
            verdicts = []
            for candidate, future in zip(candidates, futures, strict=True):
                verdict = future.result()
                if on_done:
                    on_done(candidate, verdict)
                verdicts.append(verdict)
            return verdicts

    def close(self) -> None:
        """Release what the evaluators hold (warm worker processes)."""
        for evaluator in self.evaluators:
            close = getattr(evaluator, "close", None)
            if callable(close):
                close()

    def reverify(self, candidate: Candidate) -> Verdict:
        evaluator = self.slots.get()
        try:
            if self.finalist_evaluator is not None:
                return self.finalist_evaluator.evaluate(candidate)
            if isinstance(evaluator, Reverifying):
                return evaluator.reverify(candidate)
            return evaluator.evaluate(candidate)  # each evaluation draws fresh secret seeds
        except Exception as exc:
            log.exception("re-verifying %s raised", candidate.id)
            return evaluator_failure(candidate, exc)
        finally:
            self.slots.put(evaluator)
