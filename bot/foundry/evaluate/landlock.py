"""A Landlock sandbox for candidate processes: they may write only beneath their own job directory (where their
private Triton cache lives), open no TCP connection, and (where the kernel scopes them) reach no abstract Unix
socket outside. Without it a candidate runs with every file of the user writable: it could rewrite a sibling's
outputs in /dev/shm between that worker's write and the evaluator's read, rewrite the bot's own source or the
checkout a later run uses, or send what it can read over the network. Landlock also keeps a confined process
from tracing or opening the memory of processes outside its domain (/proc/PID/mem of the evaluator, which runs
as the same user; seccomp denies ptrace but not that open). Reads are an allowlist too (`readable`): the Python
installation, the directories of the packages already imported (torch, triton, nvidia, foundry's own package),
the system's libraries and programs (/usr, /lib*, /bin, /sbin, /opt), a few named files of /etc, /proc, /sys,
the device files of /dev (not /dev/shm, where sibling jobs live) and the job directory; the checkout of the
user's repository (its .git/config holds the CI token), $HOME and the runner's work directories are not
readable. `confine` then seals the process with seccomp's second stage (no socket of any
family, no metadata changes), which Landlock does not cover.

Landlock is unprivileged and applies to the calling thread and what it starts afterwards: the worker calls
`confine(jobdir)` on its main thread, before it reads the job or runs any candidate code (a warm worker, once
it is handed its job). Linux 5.13+ (ABI 1); TCP rules from ABI 4, scopes from ABI 6; `abi()` is 0 where the
kernel has none, and the evaluator then says so once and runs candidates without it. Imports only the
standard library and foundry.evaluate.seccomp.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
import platform
import sys
import tempfile
from pathlib import Path

from foundry.evaluate import seccomp

# <linux/landlock.h>
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1
SYSCALLS = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
PR_SET_NO_NEW_PRIVS = 38
ENV = "FOUNDRY_SANDBOX_FILES"  # "1": the worker confines itself (the evaluator sets it)
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full")  # written to by libraries; nothing is kept there
READS = EXECUTE | READ_FILE | READ_DIR
# Read (and executed) beneath, where they exist: system libraries and programs (the compilers Triton's driver
# build and ptxas need), the kernel's views (/proc: other processes' memory and environ stay closed, Landlock
# denies ptrace-class access outside the domain), named configuration files of /etc (not /etc/shadow).
SYSTEM_READABLE = (
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/opt",
    "/proc",
    "/sys",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/alternatives",
    "/etc/os-release",
    "/etc/mime.types",
)
# /dev entries readable (the GPU's among them); not /dev/shm, where sibling jobs live
READABLE_DEVICES = ("null", "zero", "full", "random", "urandom", "nvidia*", "nvidia-caps", "dri")
ENVIRONMENT_DIRS = ("CUDA_HOME", "CUDA_PATH", "TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_LIBDEVICE_PATH")


class RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@functools.cache
def _libc() -> ctypes.CDLL | None:
    path = ctypes.util.find_library("c")
    if path is None or platform.machine() not in SYSCALLS or not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(path, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> int:
    """The kernel's Landlock ABI version, 0 without Landlock."""
    libc = _libc()
    if libc is None:
        return 0
    create = SYSCALLS[platform.machine()][0]
    version = libc.syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def writes(version: int) -> int:
    """The file-system rights that change something, as far as the ABI knows them."""
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO
    rights |= MAKE_BLOCK | MAKE_SYM
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


def _package_dirs(granted: tuple[str, ...]) -> set[str]:
    """The top-level package directories of every module imported so far that is not beneath `granted`
    (foundry's own package in an editable install, a package on PYTHONPATH ...), or the file alone of a
    top-level single-file module. String work only: resolving each of torch's ~1000 modules took 120 ms."""
    tops = set()
    for name, module in list(sys.modules.items()):
        location = getattr(module, "__file__", None)
        if not isinstance(location, str) or not os.path.isabs(location) or location.startswith(granted):
            continue
        depth = name.count(".") + (1 if os.path.basename(location) == "__init__.py" else 0)
        if depth == 0 or name == "__main__":
            tops.add(location)
            continue
        top = os.path.dirname(location)
        for _ in range(depth - 1):
            top = os.path.dirname(top)
        tops.add(top)
    return {os.path.realpath(top) for top in tops}


def readable(writable: list[Path]) -> list[str]:
    """Where a confined process may read (and execute): see the module's docstring. The entries of sys.path
    are granted only where they are beneath a Python prefix or a site-packages directory; an editable
    install's source directory is granted as its imported packages, not as the checkout around them."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths = {str(Path(prefix).resolve()) for prefix in prefixes}
    for entry in sys.path:
        if entry and os.path.isdir(entry) and Path(entry).name in ("site-packages", "dist-packages"):
            paths.add(str(Path(entry).resolve()))
    paths |= _package_dirs(tuple(path.rstrip("/") + "/" for path in paths | prefixes))
    paths |= {str(Path(path).resolve()) for path in SYSTEM_READABLE}
    for name in ENVIRONMENT_DIRS:
        if os.environ.get(name):
            paths.add(str(Path(os.environ[name]).resolve()))
    for pattern in READABLE_DEVICES:
        paths |= set(glob.glob(f"/dev/{pattern}"))
    paths |= {str(path) for path in writable}
    kept: list[str] = []
    for path in sorted(path for path in paths if os.path.exists(path)):
        if not kept or not path.startswith(kept[-1].rstrip("/") + "/"):  # beneath a kept one: one rule fewer
            kept.append(path)
    return kept


def restrict(writable: list[Path], device_files: tuple[str, ...] = DEVICE_FILES, reads: bool = True) -> int:
    """Confine this thread (and what it starts): writes only beneath `writable` (directories, which must
    exist) and to `device_files`, reads (with `reads`) only beneath `readable(writable)`, no TCP, no
    abstract Unix sockets or signals outside. Returns the ABI it applied; raises OSError where the kernel
    refuses."""
    libc = _libc()
    version = abi()
    if libc is None or version < 1:
        raise OSError("Landlock is not available on this system")
    create, add_rule, restrict_self = SYSCALLS[platform.machine()]
    handled = writes(version) | (READS if reads else 0)
    attr = RulesetAttr(handled, 0, 0)
    size = 8
    if version >= 4:
        attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP  # and no rule allows any port
        size = 16
    if version >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = 24
    ruleset = int(libc.syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        rules = [(str(path), handled, os.O_PATH | os.O_DIRECTORY) for path in writable]
        file_rights = handled & (WRITE_FILE | TRUNCATE | READ_FILE)
        for path in device_files:
            if os.path.exists(path):
                rules.append((path, file_rights, os.O_PATH | (os.O_DIRECTORY if os.path.isdir(path) else 0)))
        if reads:
            for path in readable(writable):
                directory = os.path.isdir(path)
                rights = READS if directory else EXECUTE | READ_FILE  # Landlock refuses directory rights on a file
                rules.append((path, rights, os.O_PATH | (os.O_DIRECTORY if directory else 0)))
        for path, rights, flags in rules:
            fd = os.open(path, flags | os.O_CLOEXEC)
            try:
                rule = PathBeneathAttr(rights, fd)
                if libc.syscall(add_rule, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(restrict_self, ruleset, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return version


def private_cache(jobdir: Path) -> Path:
    """Triton's cache for this evaluation alone, beneath the job (which is removed with it): nothing a candidate
    compiles or plants there reaches another evaluation. A shared cache cost little to give up: a second
    compile of the same kernel for sm_90 on the CPU took 0.8-1.1 s with a warm shared cache and 1.2-1.35 s
    with a fresh one (2-core machine, 2026-12-05)."""
    cache = jobdir / "triton-cache"
    cache.mkdir(exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(cache)  # Triton reads it when it next compiles
    return cache


def confine(jobdir: Path, files: bool = True) -> int:
    """The candidate process's sandbox: its temporary files go to jobdir/tmp (Triton's compiler writes some)
    and its Triton cache to jobdir/triton-cache; with `files`, it may write only beneath jobdir (Landlock);
    then the second seccomp stage (seccomp.seal: no sockets, no metadata changes, no namespaces). Returns the
    Landlock ABI applied (0 without `files`); raises OSError where the kernel refuses either."""
    scratch = jobdir / "tmp"
    scratch.mkdir(exist_ok=True)
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = str(scratch)
    private_cache(jobdir)
    version = restrict([jobdir], DEVICE_FILES + tuple(sorted(glob.glob("/dev/nvidia*")))) if files else 0
    seccomp.seal()
    return version


def failure(exc: BaseException) -> str:
    """Why confine() failed, for the evaluator (no verdict on the candidate)."""
    return f"the candidate's process could not confine itself (Landlock, seccomp): {type(exc).__name__}: {exc}"


def requested() -> bool:
    return os.environ.get(ENV) == "1"
