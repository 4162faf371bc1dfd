"""The candidate process's outer layers, around seccomp (seccomp.py) and Landlock (landlock.py):

- namespaces: where bubblewrap (`bwrap`) is installed and the kernel lets it make user namespaces, the worker
  runs in new user, pid, mount, network, IPC and UTS namespaces with a fresh /proc, so no other process of the
  machine is visible to it (no /proc/<pid>/environ of the evaluator or the runner's shell to read), it has no
  network interface but a down loopback, and when the namespace's first process dies everything in it dies.
  The file system is the host's, bound whole (Landlock confines writes and, by an allowlist, reads: the
  checkout, $HOME and the runner's directories are unreadable in both modes) but for the usual credential stores in the
  evaluator's home (~/.ssh, ~/.aws, ~/.config, ~/.netrc, ~/.git-credentials ...), which it sees empty; /dev is
  bound with its devices (the GPU's /dev/nvidia*, /dev/shm), /sys as it is, and /proc/driver/nvidia is part of
  every /proc. Elsewhere (no bwrap,
  no user namespaces: `bwrap` fails its one probe) the worker runs as a plain process, and the verdict says so;
  an unshare(1) fallback was tried and left out: without an init the worker is the namespace's pid 1, which
  ignores the signals a faulting candidate sends itself;
- no capabilities: the worker drops every capability (bounding set, effective, permitted, inheritable,
  ambient) before it runs (plain: between fork and exec, so the exec of a root process gains none; bwrap:
  `--cap-drop ALL`). Where CI runs as root this is what keeps root from meaning "may read any process";
- a non-dumpable evaluator: the process that spawns candidates marks itself non-dumpable, so a process of the
  same user without CAP_SYS_PTRACE cannot read its /proc/<pid>/environ, mem or maps (its own /proc/self stays
  readable to it);
- death with the evaluator: every worker is started from one long-lived thread (the kernel's parent-death
  signal fires when the *thread* that forked the child ends, and the evaluator spawns from several threads)
  with PR_SET_PDEATHSIG(SIGKILL), checked against a parent that died before it was set. What a candidate
  starts itself is not its child's child of the evaluator and gets no such signal: a reaper process (one per
  evaluator, in a session of its own) holds the process group of every live worker (seccomp keeps the
  candidate's processes in it) and kills those groups when the evaluator's end of its pipe closes, however
  the evaluator ended. Under bwrap the pid namespace dies with its first process as well.

Imports only the standard library.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import ctypes.util
import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ENV = "FOUNDRY_SANDBOX_NAMESPACES"  # "bwrap" or "none": the evaluator's choice instead of the probe (tests)
BWRAP_OPTIONS = (
    "--die-with-parent",
    "--unshare-user",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--cap-drop",
    "ALL",
    "--bind",
    "/",
    "/",
    "--dev-bind",
    "/dev",
    "/dev",
    "--proc",
    "/proc",
)
# Credential stores hidden from a worker under bwrap (directories: an empty tmpfs; files: /dev/null).
HIDDEN_DIRS = (".ssh", ".aws", ".azure", ".config", ".docker", ".kube", ".gnupg", ".password-store")
HIDDEN_FILES = (".netrc", ".git-credentials", ".pypirc", ".npmrc", ".gitconfig", ".pgpass")
# <linux/prctl.h>, <linux/capability.h>
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPABILITY_VERSION_3 = 0x20080522
CAPSET = {"x86_64": 126, "aarch64": 91}
CAP_LAST_FALLBACK = 63


class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


@functools.cache
def _libc() -> ctypes.CDLL | None:
    path = ctypes.util.find_library("c") if sys.platform.startswith("linux") else None
    if path is None:
        return None
    libc = ctypes.CDLL(path, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    libc.syscall.restype = ctypes.c_long
    return libc


@functools.cache
def last_capability() -> int:
    try:
        return int(open("/proc/sys/kernel/cap_last_cap").read())
    except (OSError, ValueError):
        return CAP_LAST_FALLBACK


def capabilities() -> dict[str, int]:
    """This process's capability sets as /proc/self/status lists them (CapInh, CapPrm, CapEff, CapBnd,
    CapAmb), each a bit mask."""
    sets: dict[str, int] = {}
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Cap"):
                name, _, value = line.partition(":")
                sets[name] = int(value.strip(), 16)
    return sets


def drop_capabilities() -> None:
    """Every capability out of every set of this thread, for good (between fork and exec, or on a process's
    only thread). The bounding set needs CAP_SETPCAP to shrink: a process without it has nothing to drop
    there that no_new_privs (set by the seccomp and Landlock layers) does not already keep from it. Raises
    OSError where a set cannot be cleared."""
    libc = _libc()
    if libc is None:
        return
    for cap in range(last_capability() + 1):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 1:  # EPERM: no CAP_SETPCAP
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap})")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3: none to clear
    arch = os.uname().machine
    if arch in CAPSET:
        header = CapHeader(CAPABILITY_VERSION_3, 0)
        data = (CapData * 2)()
        if libc.syscall(CAPSET[arch], ctypes.byref(header), ctypes.byref(data)) != 0:
            raise OSError(ctypes.get_errno(), "capset")


@functools.cache
def protect_evaluator() -> bool:
    """Mark this process (the evaluator) non-dumpable: processes of the same user without CAP_SYS_PTRACE can
    no longer read its /proc/<pid>/environ, mem or maps. Children are dumpable again after their exec."""
    libc = _libc()
    return libc is not None and libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


# Each of these lets a process read a non-dumpable process's /proc/<pid>/environ and memory (measured on
# Linux 6.18: any one of them is enough; CAP_SYS_ADMIN and CAP_PERFMON through the perfmon check).
INSPECTING_CAPABILITIES = (19, 21, 38)  # CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON
PR_CAP_AMBIENT_LOWER = 3


def drop_inspection() -> None:
    """Between fork and exec: the capabilities that read other processes out of the bounding and ambient
    sets, so that the program run (root included: its capabilities after exec come from the bounding set)
    cannot read a non-dumpable process's environment or memory. The others stay (bwrap uses them as root to
    map users). EPERM (no CAP_SETPCAP) leaves the bounding set: a process without CAP_SETPCAP holds none of
    these unless ambient, and ambient ones are lowered."""
    libc = _libc()
    if libc is None:
        return
    for cap in INSPECTING_CAPABILITIES:
        if cap > last_capability():
            continue
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 1:
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap})")
        libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, cap, 0, 0)  # EINVAL before Linux 4.3


def die_with_parent(parent: int) -> None:
    """Between fork and exec: SIGKILL this process when the thread that forked it ends, and end now if the
    parent already has (the signal was set too late to fire)."""
    libc = _libc()
    if libc is not None and libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        os._exit(1)


@functools.cache
def _bwrap_works() -> str | None:
    """The bwrap binary, when it runs a program in the namespaces here (tried once), else None (logged)."""
    path = shutil.which("bwrap")
    if path is None:
        log.warning("no bubblewrap (bwrap): candidate processes run without namespaces (apt-get install bubblewrap)")
        return None
    try:
        subprocess.run([path, *BWRAP_OPTIONS, "true"], check=True, timeout=60, capture_output=True)
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        log.warning(
            "bwrap cannot make namespaces here (%s %s): candidate processes run without them",
            exc,
            detail.decode(errors="replace").strip()[:200],
        )
        return None
    return path


def namespaces() -> str:
    """ "bwrap" where candidates run in namespaces of their own, else "none" (FOUNDRY_SANDBOX_NAMESPACES in the
    evaluator's environment overrides the probe: "none" always, "bwrap" where it works)."""
    wanted = os.environ.get(ENV, "bwrap")
    if wanted == "bwrap" and _bwrap_works():
        return "bwrap"
    return "none"


def command(layer: str, argv: list[str]) -> list[str]:
    """The command line that runs argv under `layer`."""
    if layer == "bwrap":
        path = _bwrap_works()
        assert path is not None
        return [path, *BWRAP_OPTIONS, *hidden(Path.home()), "--", *argv]
    return argv


def hidden(home: Path) -> list[str]:
    """bwrap options that hide the credential stores beneath `home` that exist."""
    options: list[str] = []
    for name in HIDDEN_DIRS:
        if (home / name).is_dir() and not (home / name).is_symlink():
            options += ["--tmpfs", str(home / name)]
    for name in HIDDEN_FILES:
        if (home / name).is_file() and not (home / name).is_symlink():
            options += ["--ro-bind", "/dev/null", str(home / name)]
    return options


def exit_status(layer: str, returncode: int) -> int:
    """The worker's own ending as Popen reports a direct child's: bwrap exits with 128+N when its program
    was killed by signal N."""
    if layer == "bwrap" and 128 < returncode < 128 + 65:
        return -(returncode - 128)
    return returncode


_spawner: concurrent.futures.ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def spawn(start: Callable[[], Any]) -> Any:
    """Run `start` (which forks a child) on the one thread that forks every candidate process: the parent-
    death signal is bound to that thread, which lives as long as the evaluator."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="foundry-spawner")
    return _spawner.submit(start).result()


# The reaper: reads "+PGID" and "-PGID" lines; at end of input (the evaluator is gone) kills every group left.
REAPER = """
import os, signal, sys
groups = set()
for line in sys.stdin:
    sign, pgid = line[:1], int(line[1:])
    (groups.add if sign == "+" else groups.discard)(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""


class Reaper:
    """The evaluator's side of the reaper process (started on first use)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None

    def send(self, line: str) -> None:
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self.proc = subprocess.Popen(
                    [sys.executable, "-I", "-c", REAPER],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # a kill of the evaluator's process group leaves it to do its work
                )
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
            except OSError:
                log.warning("the reaper of candidate processes is gone: %s not registered", line.strip())

    def hold(self, pgid: int) -> None:
        """Kill process group `pgid` if this process ends before `release(pgid)`."""
        self.send(f"+{pgid}\n")

    def release(self, pgid: int) -> None:
        self.send(f"-{pgid}\n")


reaper = Reaper()
