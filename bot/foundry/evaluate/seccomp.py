"""A seccomp filter for candidate processes: they may signal only themselves, may not trace or read or
write other processes' memory, and may not leave their session or process group. Without it a candidate
that got past the static guard could kill the evaluator that judges it (os.kill(os.getppid(), 9)), every
process of the user (kill(-1, 9)), or patch the evaluator's memory through ptrace or process_vm_writev: all
run as the same user. Without the last, it could start a process in a session of its own that outlives its
evaluation (the evaluator kills the candidate's process group when the candidate ends) and later rewrite
what the run writes after it (kernel.py, report.json) or disturb another candidate's timing run.

Denied calls fail with EPERM (the candidate sees PermissionError); nothing else changes. Blocked:
kill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo to any process but the candidate's own (its threads
included), tkill and pidfd_send_signal (glibc and CPython signal their own threads through tgkill), ptrace,
process_vm_readv, process_vm_writev, setsid and setpgid (the session the evaluator starts the candidate in is
made before the filter is installed), and pidfd_getfd, which would copy a file descriptor out of another
process (the evaluator's exported device buffers, exchange.py); prlimit64, sched_setaffinity, sched_setscheduler,
sched_setparam, sched_setattr, migrate_pages and move_pages on any process but the candidate's own (pid 0 or its
pid: setting the evaluator's RLIMIT_CPU below what it used makes the kernel kill it), setpriority and ioprio_set.
The filter is inherited by everything the
candidate starts; those processes may signal only the candidate (its pid is written into the program when the
filter is installed).

Linux on x86-64 and aarch64 (other systems: `available()` is False and the evaluator says so). Build the
program in the parent with `Filter()` and call `install()` in the child between fork and exec (the
subprocess preexec hook): it writes the child's pid into the program and makes two prctl calls.

`seal()` is the second stage, which the candidate's process installs on itself (all its threads) once it is
set up and before it reads its job or runs candidate code: the same rules with its own pid (inside a pid
namespace that pid differs from the one the parent sees, so a sandboxed worker relies on this stage alone),
plus no socket of any family (socket, socketpair; the worker's channels exist already and stay usable; io_uring,
which creates sockets without the call, is denied as well), no change of file metadata (chmod, chown, utimes
and xattr families: Landlock governs contents, not metadata), and no new namespaces or mounts (unshare, setns,
mount calls, clone with a namespace flag; clone3, whose flags the filter cannot read, fails with ENOSYS and
glibc falls back to clone), nor the kernel keyring, nor System V IPC (shm*, sem*, msg*) or POSIX message queues
(mq_*): objects that outlive the worker where no IPC namespace of its own contains them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import platform
import sys

# <linux/audit.h>, <linux/seccomp.h>, <linux/filter.h>, <linux/prctl.h>
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SYSCALLS = {
    "x86_64": {
        "kill": 62,
        "tkill": 200,
        "tgkill": 234,
        "rt_sigqueueinfo": 129,
        "rt_tgsigqueueinfo": 297,
        "pidfd_send_signal": 424,
        "ptrace": 101,
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "setsid": 112,
        "setpgid": 109,
        "pidfd_getfd": 438,
        "socket": 41,
        "socketpair": 53,
        "chmod": 90,
        "fchmod": 91,
        "fchmodat": 268,
        "fchmodat2": 452,
        "chown": 92,
        "fchown": 93,
        "lchown": 94,
        "fchownat": 260,
        "utime": 132,
        "utimes": 235,
        "futimesat": 261,
        "utimensat": 280,
        "setxattr": 188,
        "lsetxattr": 189,
        "fsetxattr": 190,
        "removexattr": 197,
        "lremovexattr": 198,
        "fremovexattr": 199,
        "setxattrat": 463,
        "removexattrat": 466,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "unshare": 272,
        "setns": 308,
        "mount": 165,
        "umount2": 166,
        "pivot_root": 155,
        "chroot": 161,
        "open_tree": 428,
        "move_mount": 429,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "mount_setattr": 442,
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "clone": 56,
        "clone3": 435,
        "fork": 57,
        "vfork": 58,
        "execve": 59,
        "execveat": 322,
        "prlimit64": 302,
        "sched_setaffinity": 203,
        "sched_setscheduler": 144,
        "sched_setparam": 142,
        "sched_setattr": 314,
        "migrate_pages": 256,
        "move_pages": 279,
        "setpriority": 141,
        "ioprio_set": 251,
        "shmget": 29,
        "shmat": 30,
        "shmctl": 31,
        "shmdt": 67,
        "semget": 64,
        "semop": 65,
        "semctl": 66,
        "semtimedop": 220,
        "msgget": 68,
        "msgsnd": 69,
        "msgrcv": 70,
        "msgctl": 71,
        "mq_open": 240,
        "mq_unlink": 241,
        "mq_timedsend": 242,
        "mq_timedreceive": 243,
        "mq_notify": 244,
        "mq_getsetattr": 245,
    },
    "aarch64": {
        "kill": 129,
        "tkill": 130,
        "tgkill": 131,
        "rt_sigqueueinfo": 138,
        "rt_tgsigqueueinfo": 240,
        "pidfd_send_signal": 424,
        "ptrace": 117,
        "process_vm_readv": 270,
        "process_vm_writev": 271,
        "setsid": 157,
        "setpgid": 154,
        "pidfd_getfd": 438,
        "socket": 198,
        "socketpair": 199,
        "fchmod": 52,
        "fchmodat": 53,
        "fchmodat2": 452,
        "fchown": 55,
        "fchownat": 54,
        "utimensat": 88,
        "setxattr": 5,
        "lsetxattr": 6,
        "fsetxattr": 7,
        "removexattr": 14,
        "lremovexattr": 15,
        "fremovexattr": 16,
        "setxattrat": 463,
        "removexattrat": 466,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "unshare": 97,
        "setns": 268,
        "mount": 40,
        "umount2": 39,
        "pivot_root": 41,
        "chroot": 51,
        "open_tree": 428,
        "move_mount": 429,
        "fsopen": 430,
        "fsconfig": 431,
        "fsmount": 432,
        "fspick": 433,
        "mount_setattr": 442,
        "add_key": 217,
        "request_key": 218,
        "keyctl": 219,
        "clone": 220,
        "clone3": 435,
        "execve": 221,
        "execveat": 281,
        "prlimit64": 261,
        "sched_setaffinity": 122,
        "sched_setscheduler": 119,
        "sched_setparam": 118,
        "sched_setattr": 274,
        "migrate_pages": 238,
        "move_pages": 239,
        "setpriority": 140,
        "ioprio_set": 30,
        "mq_open": 180,
        "mq_unlink": 181,
        "mq_timedsend": 182,
        "mq_timedreceive": 183,
        "mq_notify": 184,
        "mq_getsetattr": 185,
        "msgget": 186,
        "msgctl": 187,
        "msgrcv": 188,
        "msgsnd": 189,
        "semget": 190,
        "semctl": 191,
        "semtimedop": 192,
        "semop": 193,
        "shmget": 194,
        "shmctl": 195,
        "shmat": 196,
        "shmdt": 197,
    },
}
SELF_ONLY = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # first argument: the target process
# Calls that change another process's limits, scheduling or memory placement (first argument: its pid; 0 means the
# caller): allowed on the candidate's own process only. prlimit64 on the evaluator (same user, no capability
# needed) sets its RLIMIT_CPU below what it has used and the kernel kills it: kill() without kill.
SELF_OR_ZERO = (
    "prlimit64",
    "sched_setaffinity",
    "sched_setscheduler",
    "sched_setparam",
    "sched_setattr",
    "migrate_pages",
    "move_pages",
)
DENIED = (
    "setpriority",  # renice another process (who is the second argument): no candidate needs it
    "ioprio_set",
    "tkill",
    "pidfd_send_signal",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "setsid",
    "setpgid",
    "pidfd_getfd",
)
# The second stage (`seal`) denies these too (names an architecture lacks, such as chmod on aarch64, are skipped).
NETWORK = ("socket", "socketpair", "io_uring_setup", "io_uring_enter", "io_uring_register")
METADATA = (
    "chmod",
    "fchmod",
    "fchmodat",
    "fchmodat2",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "futimesat",
    "utimensat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "setxattrat",
    "removexattrat",
)
NAMESPACES = (
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
)
KEYRING = ("add_key", "request_key", "keyctl")
# System V and POSIX message-queue IPC: objects that outlive the process (a segment left in the host's IPC
# namespace where there is no bwrap --unshare-ipc) and that any later process of the user can attach.
IPC = (
    "shmget",
    "shmat",
    "shmctl",
    "shmdt",
    "semget",
    "semop",
    "semctl",
    "semtimedop",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
)
SEALED = DENIED + NETWORK + METADATA + NAMESPACES + KEYRING + IPC
# CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
CLONE_THREAD = 0x00010000
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EPERM = 1
ENOSYS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
SECCOMP_SYSCALL = {"x86_64": 317, "aarch64": 277}
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
BPF_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
X32_SYSCALL_BIT = 0x40000000
BPF_RET_K = 0x06  # BPF_RET | BPF_K
OFF_NR, OFF_ARCH, OFF_ARG0_LO, OFF_ARG0_HI = 0, 4, 16, 20  # struct seccomp_data, little-endian


def machine() -> str | None:
    arch = platform.machine()
    if not sys.platform.startswith("linux") or arch not in SYSCALLS or sys.byteorder != "little":
        return None
    return arch


@functools.cache
def libc_path() -> str | None:
    return ctypes.util.find_library("c")  # runs ldconfig: in the parent, once


def available() -> bool:
    return machine() is not None and libc_path() is not None


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def program(pid: int, arch: str, sealed: bool = False) -> tuple[list[tuple[int, int, int, int]], int]:
    """The BPF program as (code, jt, jf, k) rows, and the index of the row comparing with `pid`: allow
    everything except the calls above, where a signal call is allowed only with `pid` as its first argument.
    Calls through another ABI (i386 compat, x32) are denied: legitimate code in the candidate's process never
    makes them. `sealed`: the second stage (`seal`), which denies SEALED as well, clone with a namespace flag,
    and answers clone3 with ENOSYS."""
    numbers = SYSCALLS[arch]
    denied = [name for name in (SEALED if sealed else DENIED) if name in numbers]
    checks = [(numbers[name], "self") for name in SELF_ONLY]
    checks += [(numbers[name], "self_or_zero") for name in SELF_OR_ZERO if name in numbers]
    checks += [(numbers[name], "deny") for name in denied]
    if sealed:
        checks += [(numbers["clone"], "clone"), (numbers["clone3"], "enosys")]
    # rows with symbolic jump targets, resolved below into relative offsets
    code: list[tuple[int, str | int, str | int, int]] = [
        (BPF_LD_W_ABS, 0, 0, OFF_ARCH),
        (BPF_JEQ_K, 0, "deny", AUDIT_ARCH[arch]),
        (BPF_LD_W_ABS, 0, 0, OFF_NR),
    ]
    if arch == "x86_64":
        code.append((BPF_JGE_K, "deny", 0, X32_SYSCALL_BIT))
    code += [(BPF_JEQ_K, target, 0, nr) for nr, target in checks]
    code.append((BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    labels = {"self_or_zero": len(code)}
    code += [
        (BPF_LD_W_ABS, 0, 0, OFF_ARG0_LO),
        (BPF_JEQ_K, "self_high", "self", 0),  # pid 0: the caller itself; else it must be the candidate's pid
    ]
    labels["self"] = len(code)
    pid_at = len(code) + 1
    code += [
        (BPF_LD_W_ABS, 0, 0, OFF_ARG0_LO),
        (BPF_JEQ_K, 0, "deny", pid),  # pid_at
    ]
    labels["self_high"] = len(code)
    code += [
        (BPF_LD_W_ABS, 0, 0, OFF_ARG0_HI),
        (BPF_JEQ_K, 0, "deny", 0),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),  # the candidate's own process
    ]
    if sealed:
        labels["clone"] = len(code)
        code += [
            (BPF_LD_W_ABS, 0, 0, OFF_ARG0_LO),  # clone's flags (both architectures: first argument)
            (BPF_JSET_K, "deny", 0, CLONE_NAMESPACES),
            (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        ]
        labels["enosys"] = len(code)
        code.append((BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS))
    labels["deny"] = len(code)
    code.append((BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM))

    def offset(target: str | int, here: int) -> int:
        return labels[target] - here - 1 if isinstance(target, str) else target

    return [(op, offset(jt, i), offset(jf, i), k) for i, (op, jt, jf, k) in enumerate(code)], pid_at


class Filter:
    """The filter, built in the parent; `install()` in the child fills in the child's pid and applies it.
    `sealed`: the second stage, which a process installs on itself (`seal`)."""

    def __init__(self, sealed: bool = False) -> None:
        arch, libc = machine(), libc_path()
        if arch is None or libc is None:
            raise OSError(f"seccomp filter: unsupported system {sys.platform}/{platform.machine()}")
        self.arch = arch
        self.rows, self.pid_row = program(0, arch, sealed)
        self.array = (SockFilter * len(self.rows))(*(SockFilter(*row) for row in self.rows))
        self.fprog = SockFprog(len(self.rows), self.array)
        self.libc = ctypes.CDLL(libc, use_errno=True)
        self.prctl = self.libc.prctl
        self.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
        self.address = ctypes.cast(ctypes.pointer(self.fprog), ctypes.c_void_p)

    def install(self) -> None:
        """In the child, before exec. Raises OSError when the kernel refuses (the child must not run)."""
        self.array[self.pid_row].k = os.getpid()
        if self.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if self.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, self.address, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")

    def install_all_threads(self) -> None:
        """In a running process: the filter, with this process's pid, on every one of its threads (torch and
        CUDA have started some by now). Raises OSError when the kernel refuses or a thread cannot be synced."""
        self.array[self.pid_row].k = os.getpid()
        if self.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        syscall = self.libc.syscall
        syscall.restype = ctypes.c_long
        done = syscall(
            ctypes.c_long(SECCOMP_SYSCALL[self.arch]),
            ctypes.c_uint(SECCOMP_SET_MODE_FILTER),
            ctypes.c_uint(SECCOMP_FILTER_FLAG_TSYNC),
            self.address,
        )
        if done < 0:
            raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER, TSYNC)")
        if done > 0:
            raise OSError(f"seccomp: thread {done} could not take the filter")


def process_program(arch: str) -> list[tuple[int, int, int, int]]:
    """The BPF rows of `forbid_processes`: fork, vfork, execve, execveat and clone without CLONE_THREAD fail
    with EPERM (clone3 already answers ENOSYS after `seal`, so glibc's threads come through clone)."""
    numbers = SYSCALLS[arch]
    denied = [numbers[name] for name in ("fork", "vfork", "execve", "execveat") if name in numbers]
    code: list[tuple[int, str | int, str | int, int]] = [
        (BPF_LD_W_ABS, 0, 0, OFF_ARCH),
        (BPF_JEQ_K, 0, "deny", AUDIT_ARCH[arch]),
        (BPF_LD_W_ABS, 0, 0, OFF_NR),
    ]
    code += [(BPF_JEQ_K, "deny", 0, nr) for nr in denied]
    code.append((BPF_JEQ_K, "clone", 0, numbers["clone"]))
    code.append((BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    labels = {"clone": len(code)}
    code += [
        (BPF_LD_W_ABS, 0, 0, OFF_ARG0_LO),  # clone's flags
        (BPF_JSET_K, 0, "deny", CLONE_THREAD),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),  # a thread
    ]
    labels["deny"] = len(code)
    code.append((BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM))
    return [
        (op, labels[jt] - i - 1 if isinstance(jt, str) else jt, labels[jf] - i - 1 if isinstance(jf, str) else jf, k)
        for i, (op, jt, jf, k) in enumerate(code)
    ]


def forbid_processes() -> bool:
    """A third stage, on every thread of this process, where the candidate needs no other program (the CPU,
    where Triton's interpreter compiles nothing): no fork, vfork or exec, clone only for threads. A forked copy of
    the candidate's process computes where the runtime guard (a dispatch mode of this process) never looks.
    False where the system has no seccomp; raises OSError where the kernel refuses."""
    if not available():
        return False
    arch, libc_name = machine(), libc_path()
    assert arch is not None and libc_name is not None
    rows = process_program(arch)
    array = (SockFilter * len(rows))(*(SockFilter(*row) for row in rows))
    fprog = SockFprog(len(rows), array)
    libc = ctypes.CDLL(libc_name, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    libc.syscall.restype = ctypes.c_long
    done = libc.syscall(
        ctypes.c_long(SECCOMP_SYSCALL[arch]),
        ctypes.c_uint(SECCOMP_SET_MODE_FILTER),
        ctypes.c_uint(SECCOMP_FILTER_FLAG_TSYNC),
        ctypes.cast(ctypes.pointer(fprog), ctypes.c_void_p),
    )
    if done < 0:
        raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER, TSYNC)")
    if done > 0:
        raise OSError(f"seccomp: thread {done} could not take the filter")
    return True


def seal() -> bool:
    """The second stage on this process (see the module's doc): False where the system has no seccomp (the
    evaluator has said so); raises OSError where the kernel refuses (the candidate must not run)."""
    if not available():
        return False
    Filter(sealed=True).install_all_threads()
    return True
