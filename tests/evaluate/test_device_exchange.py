"""The device exchange's plain parts, on the CPU: the call plan the worker follows and the evaluator judges
by, which inputs are shared, poisoned output buffers, delivery into them, the file descriptors' way to the
worker. The device mappings themselves are covered by tests/gpu/test_exchange_gpu.py."""

from __future__ import annotations

import contextlib
import os
import socket
import types
from pathlib import Path

import pytest
import torch
from foundry.core.records import FailureKind
from foundry.evaluate import exchange, isolation, jobfiles
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig, delivered
from foundry.evaluate.exchange import call_plan, deliver, poison_, shareable, span
from foundry.evaluate.worker import Channel
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
    unmapped: list[int] = []
    released: list[int] = []

    class Driver:
        def current(self, device: int) -> None:
            pass

        def unmap(self, address: int, nbytes: int) -> None:
            unmapped.append(address)
            if address == 2:
                raise exchange.ExchangeError("cuMemUnmap failed with CUDA error 1")

        def release(self, handle: int) -> None:
            released.append(handle)

    monkeypatch.setattr(exchange, "driver", Driver)
    monkeypatch.setattr(exchange.torch.cuda, "device", lambda index: contextlib.nullcontext())
    monkeypatch.setattr(exchange.torch.cuda, "synchronize", lambda: None)
    shared = exchange.Shared(0)
    shared.buffers, shared.nbytes = [(1, 1024, 11), (2, 1024, 12), (3, 1024, 13)], 3072
    r, w = os.pipe()
    shared.fds = [w]  # exported, never handed over
    with pytest.raises(exchange.ExchangeError, match="cuMemUnmap failed"):
        shared.close()
    assert unmapped == [1, 2, 3]  # the buffer after the failing one too
    assert released == [11, 13]
    assert shared.buffers == [] and shared.nbytes == 0 and shared.fds == []
    assert os.read(r, 1) == b""  # the exported descriptor is closed: the pipe's only writer
    os.close(r)
    shared.close()  # nothing left: a second close frees nothing
    assert unmapped == [1, 2, 3]


def test_descriptors_reach_the_worker_over_its_control_socket_in_chunks():
    """The parent's half (Child.hand) and the worker's (Channel.receive_fds) on one socket pair: more
    descriptors than one message carries, each arriving as a working copy of the one sent."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    result_r, result_w = os.pipe()
    pipes = [os.pipe() for _ in range(isolation.MAX_FDS + 7)]
    try:
        sender = types.SimpleNamespace(control=parent)
        isolation.Child.say(sender, "job /tmp/x -")
        isolation.Child.hand(sender, [w for _, w in pipes])
        isolation.Child.say(sender, "run")
        channel = Channel(result_w, child.detach())
        assert channel.receive() == "job /tmp/x -"
        got = channel.receive_fds(len(pipes))
        assert len(got) == len(pipes) and len(set(got)) == len(got)
        for i, ((r, _), fd) in enumerate(zip(pipes, got, strict=True)):
            os.write(fd, bytes([i % 256]))
            assert os.read(r, 1) == bytes([i % 256])
            os.close(fd)
        assert channel.receive() == "run"  # words after the descriptors still arrive one by one
        parent.close()
        assert channel.receive() == ""  # the parent is gone
        with pytest.raises(OSError, match="expected 1 file descriptors"):
            channel.receive_fds(1)
        channel.control.close()
    finally:
        for r, w in pipes:
            os.close(r)
            os.close(w)
        os.close(result_r)


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


def test_a_child_that_cannot_start_leaves_no_descriptor_open(tmp_path):
    def open_fds() -> set[str]:
        return set(os.listdir("/proc/self/fd"))

    before = open_fds()
    with pytest.raises(OSError):  # its working directory does not exist: Popen raises in the parent
        isolation.Child(tmp_path / "missing", timeout_s=5, memory_mb=None, env={"PATH": os.environ["PATH"]})
    assert open_fds() <= before
