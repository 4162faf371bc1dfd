"""Trial inputs and outputs shared on the device between the evaluator and its worker (allocations exported
as file descriptors, evaluate/exchange.py), and what a process that was not handed them can reach. Skipped
without CUDA."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cheats"))

from foundry.core.records import FailureKind  # noqa: E402
from foundry.evaluate import exchange  # noqa: E402
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig  # noqa: E402
from foundry.spec.loader import load_operator  # noqa: E402
from suite import HONEST, OPERATORS, candidate  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
]

WRONG_DTYPE = """
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + row * n + cols, e / tl.sum(e, 0), mask=cols < n)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        y = torch.empty(x.shape, dtype=torch.float64, device=x.device)  # the right values, the wrong dtype
        _softmax[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
"""


def judged_calls(evaluator: CandidateEvaluator) -> list[list[bool]]:
    """Wraps evaluator.judge: the delivered flags of each candidate's planned calls (the plain call, outside
    the plan, has no shared buffers: its outputs come through the file)."""
    seen: list[list[bool]] = []
    original = evaluator.judge

    def judge(message, jobdir, prepared):
        seen.append([c.get("delivered") for c in message["calls"] if c.get("label") != exchange.PLAIN])
        return original(message, jobdir, prepared)

    evaluator.judge = judge  # type: ignore[method-assign]
    return seen


def test_outputs_are_delivered_on_the_device_and_the_buffers_freed():
    operator = load_operator(str(OPERATORS / "softmax_rows.py"))
    evaluator = CandidateEvaluator(operator, config=EvaluatorConfig(), device="cuda")
    seen = judged_calls(evaluator)
    freed: list[int] = []
    original_close = exchange.Shared.close

    def close(self):
        freed.append(len(self.buffers))
        original_close(self)
        assert self.buffers == [] and self.nbytes == 0 and self.fds == []

    exchange.Shared.close = close  # type: ignore[method-assign]
    try:
        verdict = evaluator.evaluate(candidate((HONEST / "softmax.py").read_text(), "softmax"))
    finally:
        exchange.Shared.close = original_close  # type: ignore[method-assign]
        evaluator.close()
    assert verdict.verified, verdict.failure and verdict.failure.headline()
    assert verdict.timing is not None and verdict.timing.measured
    assert evaluator.exchanging
    [flags] = seen
    assert flags and all(f is True for f in flags)
    # one buffer per trial input, per call's output and per output after the timing run, freed once
    assert len(freed) == 1 and freed[0] > len(flags)


def test_outputs_of_the_wrong_dtype_go_through_the_file_and_fail():
    operator = load_operator(str(OPERATORS / "softmax_rows.py"))
    evaluator = CandidateEvaluator(operator, config=EvaluatorConfig(), device="cuda")
    seen = judged_calls(evaluator)
    try:
        verdict = evaluator.evaluate(candidate(WRONG_DTYPE, "wrong_dtype"))
    finally:
        evaluator.close()
    assert not verdict.verified
    assert verdict.failure is not None and verdict.failure.kind is FailureKind.SHAPE_MISMATCH
    assert "float64" in verdict.failure.message
    assert seen == [[False] * len(seen[0])]


def test_a_worker_that_cannot_open_the_buffers_falls_back_to_files(monkeypatch):
    operator = load_operator(str(OPERATORS / "softmax_rows.py"))
    evaluator = CandidateEvaluator(operator, config=EvaluatorConfig(), device="cuda")
    seen = judged_calls(evaluator)
    real = exchange.descriptor
    monkeypatch.setattr(exchange, "descriptor", lambda index, nbytes, like: real(10**6, nbytes, like))  # no such fd
    try:
        verdict = evaluator.evaluate(candidate((HONEST / "softmax.py").read_text(), "softmax"))
    finally:
        evaluator.close()
    assert verdict.verified, verdict.failure and verdict.failure.headline()
    assert not evaluator.exchanging  # files from then on
    assert len(seen) == 1 and not any(seen[0])


def run_handed(script: str, task: dict, fds: list[int]) -> str:
    """Run script in a child process that inherits fds (then closed here) and reads task as JSON on stdin;
    the last line it printed, once it exited cleanly."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=json.dumps(task),
            capture_output=True,
            text=True,
            timeout=120,
            pass_fds=fds,
        )
    finally:
        for fd in fds:
            os.close(fd)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


CHILD = """
import json, sys, torch
from foundry.evaluate import exchange
descs = json.loads(sys.stdin.read())
fds = descs["fds"]
x = exchange.open_shared(descs["input"], fds)
y = exchange.open_shared(descs["output"], fds)
y.copy_(x * 2)
torch.cuda.synchronize()
print(float(x.sum()))
"""


def test_a_child_process_reads_shared_inputs_and_writes_poisoned_outputs():
    shared = exchange.Shared(0)
    try:
        x = torch.arange(12.0, device="cuda").view(3, 4).t()  # strided: kept
        desc_in = shared.put(x)
        views, [desc_out] = shared.outputs([x.contiguous()])
        assert torch.isnan(views[0]).all()
        assert desc_in["stride"] == [1, 4] and desc_in["nbytes"] >= 48
        torch.cuda.synchronize()
        fds = shared.handover()
        last = run_handed(CHILD, {"input": desc_in, "output": desc_out, "fds": fds}, fds)
        assert float(last) == float(x.sum())
        assert torch.equal(views[0], x * 2)
    finally:
        shared.close()
    assert shared.buffers == []


THIEF = """
import ctypes, json, os, sys, torch
from foundry.evaluate import exchange
task = json.loads(sys.stdin.read())
cu = exchange.driver()
torch.cuda.init()
cu.current(0)
mine = exchange.open_shared(task["mine"], task["fds"])
found = {"mine": float(mine.float().sum())}
# the sibling's descriptor, as read from its job.json, names an index among this process's own descriptors
try:
    found["descriptor"] = float(exchange.open_shared(task["sibling"], task["fds"]).float().sum())
except Exception as exc:
    found["descriptor"] = type(exc).__name__
# the evaluator's copy of the sibling's exported descriptor, through /proc
path = "/proc/%d/fd/%d" % (task["evaluator"], task["sibling_fd"])
try:
    fd = os.open(path, os.O_RDWR)
except OSError as exc:
    found["proc"] = "open: " + type(exc).__name__
else:
    try:
        handle = cu.import_fd(fd)
        address = cu.map(handle, task["sibling"]["nbytes"], 0)
        view = exchange.wrap(address, torch.float32, task["sibling"]["shape"], task["sibling"]["stride"], 0)
        found["proc"] = float(view.sum())
    except Exception as exc:
        found["proc"] = "import: " + str(exc)[:200]
# every descriptor number this process has that it was not handed
stolen = []
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    if fd in task["fds"] or fd < 3:
        continue
    try:
        cu.import_fd(fd)
        stolen.append(fd)
    except Exception:
        pass
found["stolen"] = stolen
print(json.dumps(found))
"""


def test_a_process_reaches_only_the_buffers_it_was_handed():
    """Two candidates' buffers; a worker handed the first's descriptors tries to reach the second's (a secret
    value) every way we know: the sibling's descriptor as its job.json has it, the evaluator's exported
    descriptor through /proc (the evaluator still holds it here), and every descriptor number it has."""
    mine, sibling = exchange.Shared(0), exchange.Shared(0)
    try:
        desc_mine = mine.put(torch.ones(1024, device="cuda"))
        secret = torch.full((4096,), 7.0, device="cuda")
        desc_sibling = sibling.put(secret)
        torch.cuda.synchronize()
        fds = mine.handover()
        task = {
            "mine": desc_mine,
            "sibling": desc_sibling,
            "fds": fds,
            "evaluator": os.getpid(),
            "sibling_fd": sibling.fds[desc_sibling["fd"]],
        }
        found = json.loads(run_handed(THIEF, task, fds))
        print(found)
        assert found["mine"] == 1024.0
        assert found["descriptor"] != float(secret.sum())  # its own buffer, or refused: never the sibling's
        assert found["proc"] != float(secret.sum()), found
        assert found["stolen"] == []
    finally:
        mine.close()
        sibling.close()
