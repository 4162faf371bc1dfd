"""The seccomp filter of candidate processes, on this machine's kernel: a child under it may signal itself
and its own threads, start programs, and nothing else is changed; signals to any other process (the parent,
the whole user with kill(-1), its own children), ptrace, process_vm_writev, pidfd_getfd and leaving its
session or process group fail with EPERM, and nothing a candidate started outlives its evaluation. Only
signal 0 (an existence check, harmless if the filter were missing) is sent to other processes."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from foundry.evaluate import seccomp

pytestmark = pytest.mark.skipif(not seccomp.available(), reason="no seccomp filter on this system")

CHILD = r"""
import ctypes, json, os, signal, subprocess, sys, threading
out = {}
def attempt(name, fn):
    try:
        fn()
        out[name] = "ok"
    except OSError as exc:
        out[name] = type(exc).__name__
attempt("kill parent", lambda: os.kill(os.getppid(), 0))
attempt("kill all", lambda: os.kill(-1, 0))
attempt("kill own group", lambda: os.killpg(os.getpgid(0), 0))
attempt("kill self", lambda: os.kill(os.getpid(), 0))
attempt("signal own thread", lambda: signal.pthread_kill(threading.get_ident(), 0))
attempt("run a program", lambda: subprocess.run(["true"], check=True))
sleeper = subprocess.Popen(["sleep", "3"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
attempt("kill own child", lambda: os.kill(sleeper.pid, 0))
attempt("start a new session", lambda: subprocess.run(["true"], start_new_session=True, check=True))
attempt("start a new process group", lambda: subprocess.run(["true"], process_group=0, check=True))
if sys.argv[1:] == ["filtered"]:  # unfiltered, PTRACE_ATTACH would stop the parent for real
    libc = ctypes.CDLL(None, use_errno=True)
    nr = {"x86_64": (101, 311), "aarch64": (117, 271)}[os.uname().machine]
    pidfd = libc.syscall(434, os.getppid(), 0)  # pidfd_open: allowed (the fd alone grants nothing)
    probes = {
        "ptrace parent": (nr[0], 16, os.getppid(), 0, 0),
        "write parent memory": (nr[1], os.getppid(), 0, 0, 0, 0, 0),
        "copy a parent's descriptor": (438, pidfd, 0, 0),  # pidfd_getfd of the parent's stdin
    }
    for name, call in probes.items():
        out[name] = "ok" if libc.syscall(*call) == 0 else os.strerror(ctypes.get_errno())
print(json.dumps(out))
"""


def test_a_filtered_child_signals_only_itself():
    sandbox = seccomp.Filter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "filtered"],
        preexec_fn=sandbox.install,
        start_new_session=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out == {
        "kill parent": "PermissionError",
        "kill all": "PermissionError",
        "kill own group": "PermissionError",
        "kill self": "ok",
        "signal own thread": "ok",
        "run a program": "ok",
        "kill own child": "PermissionError",
        "start a new session": "PermissionError",
        "start a new process group": "PermissionError",
        "ptrace parent": "Operation not permitted",
        "write parent memory": "Operation not permitted",
        "copy a parent's descriptor": "Operation not permitted",
    }


def test_the_same_child_unfiltered_may_signal_others():
    """The control: without the filter the same signal probes succeed (signal 0 to the parent, the group, the
    child); the ptrace and memory probes are left out here (unfiltered, an attach would stop this process)."""
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120)
    out = json.loads(proc.stdout)
    assert out["kill parent"] == out["kill own group"] == out["kill own child"] == "ok"
    assert out["start a new session"] == out["start a new process group"] == "ok"


@pytest.mark.parametrize("arch", sorted(seccomp.SYSCALLS))
def test_every_jump_lands_inside_the_program_and_the_pid_row_holds_the_pid(arch):
    rows, pid_at = seccomp.program(4242, arch)
    for i, (code, jt, jf, _k) in enumerate(rows):
        if code in (seccomp.BPF_JEQ_K, seccomp.BPF_JGE_K):
            assert i + 1 + max(jt, jf) < len(rows)
    assert rows[pid_at] == (seccomp.BPF_JEQ_K, 0, 3, 4242)
    assert rows[-1][0] == seccomp.BPF_RET_K and rows[-1][3] == seccomp.SECCOMP_RET_ERRNO | seccomp.EPERM


def test_a_kernel_that_refuses_the_filter_leaves_candidates_running_with_a_warning(monkeypatch, caplog):
    from foundry.evaluate import isolation

    def refuse(self):
        raise OSError(22, "prctl(PR_SET_SECCOMP)")

    monkeypatch.setattr(seccomp.Filter, "install", refuse)
    isolation.signal_filter.cache_clear()
    try:
        with caplog.at_level("WARNING"):
            assert isolation.signal_filter() is None
        assert "no seccomp filter (the kernel refused it" in caplog.text
    finally:
        isolation.signal_filter.cache_clear()


LEFTOVER = """
import os, subprocess, sys, time
# a process meant to outlive the evaluation: it tries a session of its own, records how that went, then waits
_code = (
    "import os, sys, time\\n"
    "try:\\n    os.setsid()\\n    how = 'own session'\\n"
    "except OSError as exc:\\n    how = type(exc).__name__\\n"
    "open(sys.argv[1], 'w').write(f'{os.getpid()} {how}')\\n"
    "time.sleep(300)\\n"
)
subprocess.Popen([sys.executable, "-c", _code, MARKER], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(600):
    if os.path.exists(MARKER) and open(MARKER).read():
        break
    time.sleep(0.05)
"""


def running(pid: int) -> bool:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"  # a zombie is dead, waiting for a reaper


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_nothing_a_candidate_started_outlives_its_evaluation(tmp_path, monkeypatch):
    from pathlib import Path

    from foundry.evaluate import sandbox

    # the pid the candidate writes is the host's only without a pid namespace (tests/evaluate/test_sandbox.py
    # checks the namespaced run)
    monkeypatch.setenv(sandbox.ENV, "none")

    from foundry.core.records import Candidate
    from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
    from foundry.spec.loader import load_operator

    cheats = Path(__file__).resolve().parents[1] / "cheats"
    marker = tmp_path / "leftover.txt"
    source = f"MARKER = {str(marker)!r}\n" + LEFTOVER + (cheats / "honest" / "softmax.py").read_text()
    operator = load_operator(str(cheats / "operators" / "softmax_rows.py"))
    # the static guard would refuse this source (subprocess): switched off to reach the isolation layer; the
    # file sandbox too, which would keep the candidate from writing its report outside its job directory, and the
    # process stage (on the CPU no candidate starts a process; a GPU worker may, and this reaper is what stops it)
    config = EvaluatorConfig(trials=2, static_guard=False, file_sandbox=False, process_sandbox=False)
    evaluator = CandidateEvaluator(operator, config=config, device="cpu")
    verdict = evaluator.evaluate(Candidate(id="leftover", source=source))
    assert verdict.verified, verdict.failure
    pid, how = marker.read_text().split()
    assert how == "PermissionError"  # no session of its own
    for _ in range(100):  # the group was killed when the candidate ended; give the kernel a moment
        if not running(int(pid)):
            break
        time.sleep(0.05)
    assert not running(int(pid))
