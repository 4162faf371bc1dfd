"""Parent side of the isolated worker: spawn, limit, watch, and turn any ending into data.

Each candidate runs in a fresh `python -m foundry.evaluate.worker` process (spawned, never forked),
in its own session (so a timeout kills everything it started), with:
  - an environment built from an allowlist, minus anything that looks like a secret;
  - an address-space cap on CPU-only runs (RLIMIT_AS; CUDA reserves huge virtual ranges, so on GPU
    the worker caps device memory instead), no core files;
  - stdout/stderr drained by the parent and capped (flooding kills the child);
  - a private pipe for its messages, and a private socket (AF_UNIX, SOCK_SEQPACKET) for the parent's
    words (the job, go/stop after correctness) and for the file descriptors of the device buffers the
    evaluator shares with this candidate alone (exchange.py);
  - a seccomp filter (seccomp.py): it may signal only itself, and may not trace other processes or touch
    their memory, so it cannot kill or patch the evaluator, which runs as the same user;
  - the outer layers of sandbox.py: namespaces of its own under bubblewrap where the system allows them, no
    capabilities, a parent-death signal (no worker outlives its evaluator), and a non-dumpable evaluator.
The layers a run had are named by `describe` (the verdict carries it).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import platform
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import foundry
from foundry.evaluate import landlock, sandbox, seccomp

ENV_ALLOW = re.compile(
    r"^(PATH|LANG|LC_[A-Z]+|TZ|CUDA_VISIBLE_DEVICES|CUDA_HOME|CUDA_PATH|LD_LIBRARY_PATH|NVIDIA_[A-Z_]+|"
    r"TRITON_[A-Z_]+|NCCL_NVLS_ENABLE|TORCH_SYMM_MEM_DISABLE_MULTICAST|NVSHMEM_DISABLE_NVLS|"
    r"OMP_NUM_THREADS|MKL_NUM_THREADS|PYTHONHASHSEED|VIRTUAL_ENV)$"
)
SECRET = re.compile(r"(TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)", re.I)
OUTPUT_CAP = 1_000_000  # bytes of stdout+stderr a candidate may print
TAIL = 4000
MAX_FDS = 250  # file descriptors per message (the kernel's SCM_MAX_FD is 253)


log = logging.getLogger(__name__)


@functools.cache
def signal_filter() -> seccomp.Filter | None:
    """The seccomp filter for candidate processes, or None (with one warning) where the system has none or
    its kernel refuses one (tried once on a trivial process, so that no candidate fails to start for it)."""
    why = f"{sys.platform}/{platform.machine()} has none"
    if seccomp.available():
        candidate_filter = seccomp.Filter()
        try:
            subprocess.run(  # noqa: PLW1509
                [sys.executable, "-c", "pass"], preexec_fn=candidate_filter.install, check=True, timeout=60
            )
            return candidate_filter
        except (OSError, subprocess.SubprocessError) as exc:
            why = f"the kernel refused it ({exc})"
    log.warning("no seccomp filter (%s): candidate processes can signal other processes of this user", why)
    return None


def describe(env: dict[str, str]) -> str:
    """The sandbox layers a worker started with `env` runs under, for the verdict."""
    layers = []
    if sandbox.namespaces() == "bwrap":
        layers.append("bwrap namespaces (user, pid, mount, net, ipc)")
    else:
        layers.append("no namespaces")
    if seccomp.available() and signal_filter() is not None:
        layers.append("seccomp (signals, ptrace, sockets, metadata)")
    if env.get(landlock.ENV) == "1":
        layers.append(f"Landlock ABI {landlock.abi()} (writes, reads)")
    layers.append("no capabilities")
    return "sandbox: " + " + ".join(layers)


def scrub(text: str) -> str:
    """Remove the values of this process's secret-looking variables from text a child produced."""
    for name, value in os.environ.items():
        if SECRET.search(name) and len(value) >= 6:
            text = text.replace(value, "***")
    return text


def child_environment(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if ENV_ALLOW.match(k) and not SECRET.search(k)}
    env.update(extra)
    package_root = str(Path(foundry.__file__).resolve().parents[1])
    env["PYTHONPATH"] = package_root
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return {k: v for k, v in env.items() if not SECRET.search(k)}


@dataclass
class ChildOutcome:
    messages: list[dict[str, Any]] = field(default_factory=list)
    returncode: int | None = None
    timed_out: bool = False
    flooded: bool = False
    output_tail: str = ""
    output_bytes: int = 0
    wall_s: float = 0.0


class Child:
    """One running worker. Messages are read on a thread; `decide` answers the go/stop question."""

    def __init__(
        self,
        jobdir: Path | None,
        *,
        timeout_s: float,
        memory_mb: int | None,
        env: dict[str, str],
        module: str = "foundry.evaluate.worker",
        cwd: Path | None = None,
        digest: str = "",
        fds: list[int] | tuple[int, ...] = (),
    ) -> None:
        """jobdir None starts a warm child that waits for `start(jobdir, …)`. digest: of the job's text files
        (jobfiles.digest), which the child checks before it reads them. fds: file descriptors handed to the
        child once it runs (its job's shared device buffers)."""
        self.jobdir = jobdir
        self.timeout_s = timeout_s
        result_r, result_w = os.pipe()
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        control_r = theirs.fileno()
        self.started = time.monotonic()

        sandbox.protect_evaluator()
        self.layer = sandbox.namespaces()
        # In a pid namespace the worker's pid is not the one the filter would be given here: there the worker
        # installs the whole filter itself (seccomp.seal, with its own pid), and bwrap drops the capabilities.
        signals = signal_filter() if self.layer == "none" else None
        parent = os.getpid()

        def limits() -> None:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if memory_mb:
                cap = memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
            sandbox.die_with_parent(parent)
            if self.layer == "none":
                sandbox.drop_capabilities()  # the bounding set too: the exec of a root process gains none
            if signals is not None:
                signals.install()  # last: raises (and the child never runs) if the kernel refuses

        # -P: the cwd (a job directory the candidate may write) is never on the child's sys.path
        argv = [sys.executable, "-P", "-m", module, str(jobdir) if jobdir else "-", str(result_w), str(control_r)]
        try:
            self.proc = sandbox.spawn(
                lambda: subprocess.Popen(
                    sandbox.command(self.layer, argv + ([digest] if digest else [])),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    pass_fds=(result_w, control_r),
                    env=env,
                    cwd=jobdir or cwd,
                    start_new_session=True,
                    preexec_fn=limits,  # noqa: PLW1509 - runs before exec: setrlimit and prctl calls
                )
            )
        except BaseException:  # nothing of this child's is left open
            self.control.close()
            theirs.close()
            os.close(result_r)
            os.close(result_w)
            raise
        sandbox.reaper.hold(self.proc.pid)  # its process group dies with this process, however it ends
        os.close(result_w)
        theirs.close()
        self.results = os.fdopen(result_r, "rb")
        self.outcome = ChildOutcome()
        self.tail = bytearray()
        self.lock = threading.Lock()
        self.message_ready = threading.Condition(self.lock)
        self.readers = [
            threading.Thread(target=self.read_messages, daemon=True),
            threading.Thread(target=self.drain_output, daemon=True),
        ]
        for reader in self.readers:
            reader.start()
        if jobdir is not None:
            self.hand(fds)

    def alive(self) -> bool:
        return not self.exited(0)

    def start(self, jobdir: Path, timeout_s: float, digest: str = "", fds: list[int] | tuple[int, ...] = ()) -> None:
        """Hand a warm child its job (and the job's file descriptors); the timeout counts from now."""
        self.jobdir = jobdir
        self.timeout_s = timeout_s
        self.started = time.monotonic()
        self.say(f"job {jobdir} {digest or '-'}")
        self.hand(fds)

    def hand(self, fds: list[int] | tuple[int, ...]) -> None:
        """Send file descriptors over the control socket ("fds N" messages of at most MAX_FDS each; the
        child takes them with `receive_fds`). The child gets its own copies: the caller may close these."""
        for i in range(0, len(fds), MAX_FDS):
            chunk = list(fds[i : i + MAX_FDS])
            try:
                socket.send_fds(self.control, [f"fds {len(chunk)}".encode()], chunk)
            except OSError:  # the child is gone: its ending is reported as such
                return

    def restart_clock(self) -> None:
        self.started = time.monotonic()

    def parent_turn(self, step: Callable[[], Any] | None) -> Any:
        """Run the parent's step (e.g. waiting for the device); the time it takes is not the child's."""
        if step is None:
            return None
        began = time.monotonic()
        try:
            return step()
        finally:
            self.started += time.monotonic() - began

    def read_messages(self) -> None:
        for raw in self.results:
            try:
                message = json.loads(raw)
            except ValueError:
                message = {"phase": "garbled", "raw": raw[:200].decode(errors="replace")}
            with self.lock:
                self.outcome.messages.append(message)
                self.message_ready.notify_all()
        with self.lock:
            self.message_ready.notify_all()

    def drain_output(self) -> None:
        assert self.proc.stdout is not None
        while chunk := self.proc.stdout.read1(65536):
            self.outcome.output_bytes += len(chunk)
            self.tail = (self.tail + chunk)[-TAIL:]
            if self.outcome.output_bytes > OUTPUT_CAP and not self.outcome.flooded:
                self.outcome.flooded = True
                self.kill()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def remaining(self) -> float:
        return max(0.0, self.timeout_s - (time.monotonic() - self.started))

    def wait_message(self, *phases: str) -> dict[str, Any] | None:
        """The next message of one of `phases` (or an error), or None if the child ended, flooded or timed
        out first."""
        with self.lock:
            while True:
                for message in self.outcome.messages:
                    if message.get("phase") in (*phases, "error"):
                        self.outcome.messages.remove(message)
                        return message
                if self.exited(0) and not self.readers[0].is_alive():
                    return None
                if self.outcome.flooded:
                    return None
                left = self.remaining()
                if left <= 0:
                    self.outcome.timed_out = True
                    self.kill()
                    return None
                self.message_ready.wait(timeout=min(left, 0.5))

    def say(self, word: str) -> None:
        try:
            self.control.send(word.encode())
        except OSError:  # the child is gone: its ending is reported as such
            pass

    def exited(self, timeout: float) -> bool:
        """Wait up to `timeout` for the child to exit, without reaping it: only `finish` reaps, after killing
        the child's process group, whose id (the child's pid) stays reserved until then. False on timeout."""
        deadline = time.monotonic() + timeout
        while self.proc.returncode is None:
            try:
                if os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:  # reaped meanwhile
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def finish(self) -> ChildOutcome:
        if not self.exited(max(self.remaining(), 1.0)):
            self.outcome.timed_out = True
        # Whatever the candidate started ends with it: the seccomp filter keeps its processes in the child's
        # process group (no setsid, no setpgid), killed here before the child is reaped.
        self.kill()
        sandbox.reaper.release(self.proc.pid)
        self.proc.wait()
        for reader in self.readers:
            reader.join(timeout=5)
        self.control.close()
        self.results.close()
        self.outcome.returncode = sandbox.exit_status(self.layer, self.proc.returncode)
        self.outcome.output_tail = self.tail.decode(errors="replace")
        self.outcome.wall_s = time.monotonic() - self.started
        return self.outcome


class WarmPool:
    """Keeps `size` workers started ahead, so the next candidate does not wait for torch and triton
    to import (and, on a GPU, for a CUDA context). A warm child holds no job data until `take` hands
    it one; each child runs one candidate and exits."""

    def __init__(self, *, memory_mb: int | None, env: dict[str, str], cwd: Path, size: int = 1) -> None:
        self.memory_mb = memory_mb
        self.env = env
        self.cwd = cwd
        self.size = max(1, size)
        self.lock = threading.Lock()
        self.ready: list[Child] = []
        self.closed = False

    def spawn(self) -> Child:
        return Child(None, timeout_s=0, memory_mb=self.memory_mb, env=self.env, cwd=self.cwd)

    def take(self, jobdir: Path, timeout_s: float, digest: str = "", fds: list[int] | tuple[int, ...] = ()) -> Child:
        with self.lock:
            child = None
            while self.ready and child is None:
                child = self.ready.pop(0)
                if not child.alive():
                    child.finish()
                    child = None
            if child is None:
                child = self.spawn()
            child.start(jobdir, timeout_s, digest, fds)
            while not self.closed and len(self.ready) < self.size:
                self.ready.append(self.spawn())
            return child

    def close(self) -> None:
        with self.lock:
            self.closed = True
            children, self.ready = self.ready, []
        for child in children:
            child.kill()
            child.finish()


def run_child(
    jobdir: Path,
    *,
    timeout_s: float,
    memory_mb: int | None,
    env: dict[str, str],
    decide: Callable[[dict[str, Any]], bool],
    pool: WarmPool | None = None,
    timed: Callable[[dict[str, Any]], None] | None = None,
    ready: Callable[[], None] | None = None,
    ran: Callable[[], None] | None = None,
    after_ran: Callable[[], None] | None = None,
    digest: str = "",
    fds: list[int] | tuple[int, ...] = (),
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, ChildOutcome]:
    """Run the worker through its phases, calling the parent's step at each: `ready` when it has loaded
    (and compiled) the candidate and waits to run it (the parent takes the device shared), `ran` when its
    correctness calls are done (the device is free again while it writes the outputs), `decide` on its
    correctness message (judge, and whether to time it), `timed` on its timing message, `after_ran` when
    its calls after the timing run are done (on the host; the exclusive hold can go). The timing message
    comes back with the "after" message, or None, as its "after". Time spent in the parent's steps does
    not count against the candidate's timeout. fds: file descriptors the child is handed after "run" (its
    trials' shared device buffers: not before the candidate is built), closed here once it holds its copies
    (or could not be started)."""
    try:
        if pool is not None:
            child = pool.take(jobdir, timeout_s, digest)
        else:
            child = Child(jobdir, timeout_s=timeout_s, memory_mb=memory_mb, env=env, digest=digest)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    timing = None
    try:
        correctness = child.wait_message("ready", "correctness")
        if correctness is not None and correctness.get("phase") == "ready":
            child.parent_turn(ready)
            child.say("run")
            child.hand(fds)
            correctness = child.wait_message("ran", "correctness")
            if correctness is not None and correctness.get("phase") == "ran":
                child.parent_turn(ran)
                correctness = child.wait_message("correctness")
        go = (
            correctness is not None
            and correctness.get("error") is None
            and child.parent_turn(lambda: decide(correctness))
        )
        if go:
            child.restart_clock()  # the timing run has the candidate's whole timeout again
        child.say("time" if go else "stop")
        if go:
            timing = child.wait_message("timing")
            if timing is not None and timing.get("error") is None:
                child.parent_turn(lambda: timed(timing) if timed is not None else None)
                after = child.wait_message("after ran", "after")
                if after is not None and after.get("phase") == "after ran":
                    child.parent_turn(after_ran)
                    after = child.wait_message("after")
                timing = {**timing, "after": after}
    except BaseException:
        child.say("stop")
        child.kill()
        child.finish()
        raise
    finally:
        for fd in fds:
            os.close(fd)
    return correctness, timing, child.finish()


def describe_signal(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
