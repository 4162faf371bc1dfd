"""The Landlock sandbox on CUDA (evaluate/landlock.py, on by default): a candidate evaluated on the GPU, by a
cold worker or a warm one, still computes and is verified, while its writes outside its job directory and its
TCP connections fail. The worker opens the device before it confines itself (the driver's first call fails
under Landlock). Skipped without CUDA or Landlock."""

from __future__ import annotations

import socket
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from foundry.core.records import Candidate
from foundry.evaluate import landlock
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

CHEATS = Path(__file__).resolve().parents[1] / "cheats"
sys.path.insert(0, str(CHEATS))

from suite import ESCAPE  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
    pytest.mark.skipif(landlock.abi() < 1, reason="no Landlock in this kernel"),
]


@pytest.mark.parametrize("warm", [False, True], ids=["cold-worker", "warm-worker"])
def test_a_gpu_candidate_is_confined_and_still_runs(tmp_path, warm):
    target = tmp_path / "escape.txt"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.5)
        header = f"ESCAPE_TO = {str(target)!r}\nPORT = {server.getsockname()[1]}\n"
        source = header + textwrap.dedent(ESCAPE) + (CHEATS / "honest" / "softmax.py").read_text()
        operator = load_operator(str(CHEATS / "operators" / "softmax_rows.py"))
        # the static guard refuses open() and sockets: off, to reach the sandbox
        config = EvaluatorConfig(trials=2, static_guard=False, warm_pool=warm)
        evaluator = CandidateEvaluator(operator, config=config, device="cuda")
        try:
            assert evaluator.env.get(landlock.ENV) == "1"
            verdict = evaluator.evaluate(Candidate(id="escape", source=source))
        finally:
            evaluator.close()
        try:
            connection, _ = server.accept()
            connection.close()
            connected = True
        except TimeoutError:
            connected = False
    assert verdict.verified, verdict.failure  # it caught its errors and computed the softmax on the device
    assert verdict.timing is not None and verdict.timing.measured
    assert not target.exists() and not connected
