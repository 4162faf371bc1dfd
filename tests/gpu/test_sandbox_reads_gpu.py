"""The read allowlist on CUDA (evaluate/landlock.py): an honest candidate, on a cold worker and a warm one, in
both namespace modes, still finds the driver, ptxas and the CUDA libraries it needs and is verified, while its
reads of the checkout's .git/config fail. Skipped without CUDA or Landlock."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from foundry.core.records import Candidate
from foundry.evaluate import landlock, sandbox
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "cheats"
MODES = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(sandbox.namespaces() != "bwrap", reason="no bwrap"))]

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
    pytest.mark.skipif(landlock.abi() < 1, reason="no Landlock in this kernel"),
]


def evaluate(source: str, mode: str, warm: bool, monkeypatch: pytest.MonkeyPatch, static_guard: bool = True):
    monkeypatch.setenv(sandbox.ENV, mode)
    config = EvaluatorConfig(trials=2, warm_pool=warm, static_guard=static_guard)
    operator = load_operator(str(CHEATS / "operators" / "softmax_rows.py"))
    evaluator = CandidateEvaluator(operator, config=config, device="cuda")
    try:
        return evaluator.evaluate(Candidate(id="gpu-reads", source=source))
    finally:
        evaluator.close()


@pytest.mark.parametrize("warm", [False, True], ids=["cold-worker", "warm-worker"])
@pytest.mark.parametrize("mode", MODES)
def test_an_honest_gpu_candidate_runs_under_the_read_allowlist(mode, warm, monkeypatch):
    verdict = evaluate((CHEATS / "honest" / "softmax.py").read_text(), mode, warm, monkeypatch)
    assert verdict.verified, verdict.model_dump_json()[-2000:]
    assert verdict.timing is not None and verdict.timing.measured


@pytest.mark.parametrize("mode", MODES)
def test_the_checkout_stays_unreadable_on_the_gpu(mode, monkeypatch):
    if not (ROOT / ".git" / "config").is_file():  # a copy of the tree without git (the lent GPU machine's)
        pytest.skip("this checkout has no .git/config for the candidate to try")
    source = (CHEATS / "candidates" / "redteam_sandbox_read_checkout.py").read_text()
    verdict = evaluate(source, mode, False, monkeypatch, static_guard=False)
    assert not verdict.verified
    assert "PermissionError" in verdict.model_dump_json()
