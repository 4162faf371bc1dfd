"""The device exchange's plain parts, on the CPU: the call plan the worker follows and the evaluator judges
by, which inputs are shared, poisoned output buffers, delivery into them. The CUDA IPC itself is covered
by tests/gpu/test_exchange_gpu.py."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import torch
from foundry.core.records import FailureKind
from foundry.evaluate import exchange, jobfiles
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig, delivered
from foundry.evaluate.exchange import call_plan, deliver, poison_, shareable, span
from foundry.spec.loader import load_operator

OPERATOR = Path(__file__).resolve().parents[1] / "cheats" / "operators" / "softmax_rows.py"


def test_call_plan_orders_trials_rewrite_variants_and_state_calls():
    assert call_plan(3, 4) == [
        ("trial", 0),
        ("trial", 1),
        ("trial", 2),
        ("rewrite", 0),
        ("trial", 3),
        ("repeat", 0),
        ("moved", 0),
        ("fresh", 1),
    ]
    assert call_plan(1, 1) == [("trial", 0), ("repeat", 0), ("moved", 0)]  # no rewrite or fresh with one trial


def test_closing_frees_every_buffer_even_after_a_failure(monkeypatch):
    freed: list[int] = []

    class Runtime:
        def free(self, pointer: int) -> None:
            freed.append(pointer)
            if pointer == 2:
                raise RuntimeError("cudaFree failed: error 1")

    monkeypatch.setattr(exchange, "runtime", Runtime)
    monkeypatch.setattr(exchange.torch.cuda, "device", lambda index: contextlib.nullcontext())
    monkeypatch.setattr(exchange.torch.cuda, "synchronize", lambda: None)
    shared = exchange.Shared(0)
    shared.pointers, shared.nbytes = [1, 2, 3], 3072
    with pytest.raises(RuntimeError, match="cudaFree failed"):
        shared.close()
    assert freed == [1, 2, 3]  # the buffer after the failing one too
    assert shared.pointers == [] and shared.nbytes == 0
    shared.close()  # nothing left: a second close frees nothing
    assert freed == [1, 2, 3]


def test_shareable_inputs_reach_no_element_twice():
    assert shareable(torch.ones(3, 4))
    assert shareable(torch.ones(3, 4).t())  # transposed: strides kept
    assert shareable(torch.ones(8)[::2])  # gaps are fine
    assert not shareable(torch.ones(1, 4).expand(3, 4))  # a broadcast goes through the file
    assert not shareable(torch.ones(9).as_strided((3, 3), (1, 1)))  # overlapping windows too
    assert not shareable(torch.ones(0))
    assert not shareable(3)
    assert span([3, 4], [1, 3]) == 12 and span([2, 0], [1, 1]) == 0


def test_poisoned_buffers_match_no_reference():
    refs = (torch.randn(5), torch.tensor([0, 7, -3]), torch.tensor([True, False]), torch.randn(3).to(torch.bfloat16))
    for ref in refs:
        buf = poison_(torch.empty_like(ref), ref)
        if ref.is_floating_point():
            assert torch.isnan(buf).all()
        else:
            assert not (buf == ref).any()


def test_deliver_copies_only_outputs_shaped_like_the_buffers():
    buffers = [torch.full((2, 3), float("nan"))]
    assert not deliver(torch.ones(3, 2), buffers)  # shape
    assert not deliver(torch.ones(2, 3, dtype=torch.float64), buffers)  # dtype
    assert not deliver([torch.ones(2, 3), torch.ones(2, 3)], buffers)  # count
    assert not deliver([torch.ones(2, 3), "x"][1:], buffers)  # not a tensor
    assert not deliver(torch.ones(2, 3), None)  # no buffers: the file carries it
    assert torch.isnan(buffers[0]).all()  # nothing copied by a refusal
    out = torch.arange(6.0).view(3, 2).t()  # any strides
    assert deliver((out,), buffers)
    assert torch.equal(buffers[0], out)


def test_only_a_true_flag_counts_as_delivered():
    buffers = [[torch.zeros(1)], [torch.zeros(1)], [torch.zeros(1)]]
    picked = delivered([True, "yes", 1], buffers, 4)
    assert picked[0] is buffers[0] and picked[1:] == [None, None, None]
    assert delivered(None, buffers, 2) == [None, None]
    assert delivered([True, True], [], 2) == [None, None]  # flags without buffers: the file's entries


def test_judging_refuses_calls_off_the_plan(tmp_path):
    evaluator = CandidateEvaluator(load_operator(str(OPERATOR)), config=EvaluatorConfig(), device="cpu")
    prepared = evaluator.prepare()
    plan = call_plan(evaluator.trials, len(prepared.refs))
    outputs = [[prepared.refs[trial][0].clone()] for _, trial in plan]
    jobfiles.save(outputs[1:] + outputs[:1], tmp_path / "outputs.pt")
    calls = [
        {"label": label, "trial": trial, "output": {"container": "Tensor", "items": [{"type": "torch.Tensor"}]}}
        for label, trial in plan
    ]
    swapped = calls[1:] + calls[:1]  # the same calls, in another order
    judged = evaluator.judge({"calls": swapped}, tmp_path, prepared)
    [failure] = judged["failures"]
    assert failure.rule == "call_plan" and failure.kind is FailureKind.CRASH
    assert judged["checks"] == []
