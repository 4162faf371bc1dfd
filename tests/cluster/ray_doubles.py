"""An evaluator double for the Ray executor's slot tests, shipped to the actors by value (the tests
register this module with Ray's cloudpickle): each evaluate() waits at a barrier for `parties` calls, so a
verdict says whether that many candidates were inside one actor at the same time."""

from __future__ import annotations

import threading

from foundry.core.records import Candidate, Diagnosis, FailureKind, Stage, Verdict


class BarrierEvaluator:
    concurrency = 1
    timing_available = False
    device_name = "cpu (barrier double)"

    def __init__(self, parties: int, wait_s: float) -> None:
        self.barrier = threading.Barrier(parties)
        self.wait_s = wait_s

    def evaluate(self, candidate: Candidate) -> Verdict:
        try:
            self.barrier.wait(timeout=self.wait_s)
        except threading.BrokenBarrierError:
            failure = Diagnosis(
                stage=Stage.RUN,
                kind=FailureKind.TIMEOUT,
                message=f"alone in the actor: {self.barrier.parties} calls never met within {self.wait_s} s",
                rule="barrier",
            )
            return Verdict(
                candidate_id=candidate.id, verified=False, policy="strict", device="cpu", diagnoses=(failure,)
            )
        return Verdict(candidate_id=candidate.id, verified=True, policy="strict", device="cpu")


class BarrierFactory:
    def __init__(self, parties: int, wait_s: float) -> None:
        self.parties, self.wait_s = parties, wait_s

    def __call__(self, device: str) -> BarrierEvaluator:
        return BarrierEvaluator(self.parties, self.wait_s)


class ThreadsEvaluator:
    """Reports, as its verdict's checks, the thread settings a candidate's process would get here: the
    OMP_NUM_THREADS of the environment the evaluator builds for its children, and torch's pool size in a
    real child started with it; and this actor's own torch pool size."""

    concurrency = 1
    timing_available = False
    device_name = "cpu (threads double)"

    def evaluate(self, candidate: Candidate) -> Verdict:
        import subprocess
        import sys

        import torch
        from foundry.evaluate.isolation import child_environment

        env = child_environment({})
        probe = "import torch; print(torch.get_num_threads())"
        child = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
        checks = (
            f"child OMP_NUM_THREADS={env.get('OMP_NUM_THREADS', 'unset')}",
            f"child torch threads={child.stdout.strip() or child.stderr.strip()[-200:]}",
            f"actor torch threads={torch.get_num_threads()}",
        )
        return Verdict(candidate_id=candidate.id, verified=True, policy="strict", device="cpu", checks_passed=checks)


class ThreadsFactory:
    def __call__(self, device: str) -> ThreadsEvaluator:
        return ThreadsEvaluator()
