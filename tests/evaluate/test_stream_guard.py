"""The runtime guard's stream check, on the CPU with the current stream faked: a Triton launch or an aten op
made while another stream than the caller's is current is recorded, and the evaluator fails the call with
work_escapes_stream. (On the H200 the side-stream cheats in tests/cheats/candidates_gpu run it for real.)"""

from __future__ import annotations

import types
from pathlib import Path

import torch
import triton
import triton.language as tl
from foundry.core.records import FailureKind, Stage
from foundry.evaluate import runtime_guard
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.evaluate.runtime_guard import LaunchRecorder, OpLog
from foundry.spec.loader import load_operator

OPERATOR = Path(__file__).resolve().parents[1] / "cheats" / "operators" / "softmax_rows.py"


@triton.jit
def _twice(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2, mask=i < n)


def test_launches_and_ops_on_another_stream_are_recorded(monkeypatch):
    current = types.SimpleNamespace(cuda_stream=0x10)
    monkeypatch.setattr(runtime_guard.torch.cuda, "current_stream", lambda *a: current)
    recorder = LaunchRecorder()
    recorder.install()
    try:
        recorder.stream = 0x10
        x, y = torch.arange(4.0), torch.empty(4)
        with OpLog(recorder):
            _twice[(1,)](x, y, 4, BLOCK=4)
            torch.add(x, 1)
        assert recorder.foreign == []  # all on the caller's stream
        current.cuda_stream = 0x20  # a side stream made current by the candidate
        with OpLog(recorder):
            _twice[(1,)](x, y, 4, BLOCK=4)
            torch.add(x, 1)
        assert recorder.foreign == [
            "_twice on stream 0x20, not the caller's 0x10",
            "aten.add on stream 0x20, not the caller's 0x10",
        ]
        assert torch.equal(y, x * 2)
        recorder.stream = None  # on the CPU: nothing checked
        _twice[(1,)](x, y, 4, BLOCK=4)
        assert len(recorder.foreign) == 2
    finally:
        for cls, original in recorder.installed:
            cls.run = original


def test_a_call_with_work_on_another_stream_fails_the_runtime_guard():
    evaluator = CandidateEvaluator(load_operator(str(OPERATOR)), config=EvaluatorConfig(), device="cpu")
    call = {
        "label": "trial",
        "trial": 0,
        "launches": 1,
        "ops": {},
        "threads": 0,
        "poisoned": True,
        "violations": [],
        "foreign_streams": ["_softmax_kernel on stream 0x20, not the caller's 0x10"],
    }
    diag = evaluator.runtime_guard([call], set())
    assert diag is not None
    assert (diag.stage, diag.kind, diag.rule) == (
        Stage.RUNTIME_GUARD,
        FailureKind.TIMING_ANOMALY,
        "work_escapes_stream",
    )
    assert "trial call 0" in diag.message and "0x20" in diag.message
    assert evaluator.runtime_guard([{**call, "foreign_streams": []}], set()) is None
