"""The evaluator's GPU scheduling on CUDA: several candidates in flight on one GPU, each timing run
alone, fp32 references without TF32. Skipped without CUDA."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cheats"))

from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig  # noqa: E402
from foundry.evolve.executor import LocalExecutor  # noqa: E402
from foundry.spec.loader import load_operator  # noqa: E402
from suite import HONEST, OPERATORS, candidate  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]


def test_concurrent_candidates_are_verified_and_timed_one_at_a_time():
    operator = load_operator(str(OPERATORS / "softmax_rows.py"))
    config = EvaluatorConfig(warm_pool=True, gpu_concurrency=3)
    evaluator = CandidateEvaluator(operator, config=config, device="cuda:0")
    exclusive_overlaps = []
    lock = evaluator.device_lock
    original = lock.acquire_exclusive

    def watched():
        token = original()
        if lock.sharing:
            exclusive_overlaps.append(lock.sharing)
        return token

    lock.acquire_exclusive = watched  # type: ignore[method-assign]
    source = (HONEST / "softmax.py").read_text()
    executor = LocalExecutor([evaluator])
    try:
        assert executor.workers == 3
        candidates = [candidate(source + f"\n# copy {i}\n", f"softmax{i}") for i in range(6)]
        verdicts = executor.evaluate_all(candidates)
    finally:
        executor.close()
    assert [v.candidate_id for v in verdicts] == [c.id for c in candidates]
    for verdict in verdicts:
        assert verdict.verified, verdict.failure and verdict.failure.headline()
        assert verdict.timing is not None and verdict.timing.measured and verdict.timing.trials >= 30
    assert exclusive_overlaps == []  # no correctness run held the device while a timing run had it
    assert lock.sharing == 0 and not lock.exclusive_held
    assert threading.active_count() < 50


def test_fp32_operator_runs_cudnn_without_tf32():
    operator = load_operator(str(OPERATORS / "softmax_rows.py"))
    assert operator.spec.precision == "fp32"
    torch.backends.cudnn.allow_tf32 = True
    evaluator = CandidateEvaluator(operator, device="cuda")
    try:
        assert torch.backends.cudnn.allow_tf32 is False
        verdict = evaluator.evaluate(candidate((HONEST / "softmax.py").read_text(), "softmax"))
        assert verdict.verified and verdict.timing is not None
        assert any("TF32 off" in note for note in verdict.timing.baseline_notes)
    finally:
        evaluator.close()


@pytest.mark.parametrize("layout", ["dense", "strided", "broadcast", "rows"])
def test_upstream_gradients_are_drawn_on_the_device_alike_in_every_dtype(layout):
    """Both sides of a gradient check (and the fp64 twin) draw the upstream gradients from one seed on the GPU: the
    draws agree across output dtypes and repeat exactly, with spread and holes, and never touch the host's
    generator."""
    from foundry.evaluate import gradients

    outs32 = [torch.empty(512, 384, device="cuda"), torch.empty(7, device="cuda")]
    outs64 = [o.double() for o in outs32]
    host = torch.random.get_rng_state()
    for options in ({}, {"spread": (-6.0, 5.0)}, {"holes": True}):
        first = gradients.upstream(outs32, 1234, layout, **options)
        again = gradients.upstream(outs32, 1234, layout, **options)
        wide = gradients.upstream(outs64, 1234, layout, **options)
        other = gradients.upstream(outs32, 1235, layout, **options)
        for a, b, w in zip(first, again, wide, strict=True):
            assert a.device.type == "cuda" and a.dtype == torch.float32 and w.dtype == torch.float64
            assert torch.equal(a, b)
            assert torch.equal(a, w.float())
        assert not torch.equal(first[0], other[0])  # another seed, another draw (the 2-d output: holes leave values)
    assert torch.equal(host, torch.random.get_rng_state())
