"""The candidate's file and network sandbox (evaluate/landlock.py): a confined process writes only beneath its
job directory (and Triton's cache), reads only what its allowlist names, opens no TCP connection and cannot open
its parent's memory.
Skipped where the kernel has no Landlock."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from foundry.core.records import Candidate
from foundry.evaluate import landlock
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="no Landlock in this kernel")

CHEATS = Path(__file__).resolve().parents[1] / "cheats"
sys.path.insert(0, str(CHEATS))

from suite import escape_attempt  # noqa: E402

PROBE = """
import os, socket, sys, tempfile
from pathlib import Path
from foundry.evaluate import landlock

job, outside, port = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
landlock.confine(job)
(job / "inside.txt").write_text("ok")
with tempfile.NamedTemporaryFile() as scratch:
    print("tmp", scratch.name)
open("/dev/null", "w").write("x")
for target in (outside / "escape.txt", outside / "existing.txt"):
    try:
        target.open("a").write("x")
        print("wrote", target.name)
    except PermissionError:
        print("denied", target.name)
try:
    socket.create_connection(("127.0.0.1", port), timeout=5)
    print("connected")
except PermissionError:
    print("tcp denied")
try:  # reads are an allowlist too: a directory of the runner's is not on it
    print("read", (outside / "existing.txt").read_text())
except PermissionError:
    print("read denied")
try:  # the parent's memory, which a process of the same user (or root) may otherwise read and write
    open(f"/proc/{os.getppid()}/mem", "r+b").close()
    print("parent memory opened")
except PermissionError:
    print("parent memory denied")
"""


def test_a_confined_process_writes_only_in_its_job_directory(tmp_path):
    job, outside = tmp_path / "job", tmp_path / "outside"
    job.mkdir()
    outside.mkdir()
    (outside / "existing.txt").write_text("kept")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(job), str(outside), str(server.getsockname()[1])],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == f"tmp {job / 'tmp'}/" + lines[0].rsplit("/", 1)[1]  # temporary files in the job dir
    assert lines[1:] == [
        "denied escape.txt",
        "denied existing.txt",
        "tcp denied",
        "read denied",
        "parent memory denied",
    ]
    assert (job / "inside.txt").read_text() == "ok"
    assert not (outside / "escape.txt").exists() and (outside / "existing.txt").read_text() == "kept"


@pytest.mark.parametrize("sandbox", [True, False])
def test_a_candidate_cannot_write_outside_its_job_or_connect_out(tmp_path, sandbox):
    config = EvaluatorConfig(trials=2, file_sandbox=sandbox)
    verdict, target, connected, sandboxed = escape_attempt(tmp_path, config, "cpu")
    assert sandboxed == sandbox
    assert verdict.verified, verdict.failure  # it caught its errors and computed the softmax
    assert any(check.startswith("sandbox: ") for check in verdict.checks_passed)  # the layers it ran under
    assert ("Landlock ABI" in " ".join(verdict.checks_passed)) == sandbox
    assert not connected  # no socket either way: seccomp's second stage (and a network namespace under bwrap)
    if sandbox:  # the default
        assert not target.exists()
    else:  # the same candidate without Landlock: the test can tell
        assert target.read_text() == "a candidate was here"


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a torch without a usable GPU")
def test_a_worker_that_cannot_open_its_gpu_gives_no_verdict_on_the_candidate():
    """On a GPU the worker opens the device before it confines itself; where that fails (here: a CPU build
    told it has a GPU) it says so as a failure of the evaluation, not of the candidate's code."""
    operator = load_operator(str(CHEATS / "operators" / "softmax_rows.py"))
    evaluator = CandidateEvaluator(operator, config=EvaluatorConfig(trials=2), device="cpu")
    evaluator.env["FOUNDRY_WARM_DEVICE"] = "cuda"
    source = (CHEATS / "honest" / "softmax.py").read_text()
    verdict = evaluator.evaluate(Candidate(id="honest", source=source))
    assert not verdict.verified
    assert verdict.failure.rule == "device_failed", verdict.failure
    assert "could not open the GPU" in verdict.failure.message
