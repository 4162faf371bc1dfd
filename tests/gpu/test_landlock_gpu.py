"""The Landlock sandbox on CUDA (evaluate/landlock.py, on by default): a candidate evaluated on the GPU, by a
cold worker or a warm one, still computes and is verified, while its writes outside its job directory and its
TCP connections fail. The worker opens the device before it confines itself (the driver's first call fails
under Landlock). Skipped without CUDA or Landlock."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from foundry.evaluate import landlock
from foundry.evaluate.evaluator import EvaluatorConfig

CHEATS = Path(__file__).resolve().parents[1] / "cheats"
sys.path.insert(0, str(CHEATS))

from suite import escape_attempt  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
    pytest.mark.skipif(landlock.abi() < 1, reason="no Landlock in this kernel"),
]


@pytest.mark.parametrize("warm", [False, True], ids=["cold-worker", "warm-worker"])
def test_a_gpu_candidate_is_confined_and_still_runs(tmp_path, warm):
    config = EvaluatorConfig(trials=2, warm_pool=warm)
    verdict, target, connected, sandboxed = escape_attempt(tmp_path, config, "cuda")
    assert sandboxed  # the default
    assert verdict.verified, verdict.failure  # it caught its errors and computed the softmax on the device
    assert verdict.timing is not None and verdict.timing.measured
    assert not target.exists() and not connected
