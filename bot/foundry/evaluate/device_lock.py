"""One GPU, several candidates in flight, one timing at a time — across threads and processes.

Correctness work of several candidates may share a GPU (their numbers do not depend on who else runs),
but a timing run must have the device to itself. `DeviceLock` is a shared/exclusive lock that prefers
the exclusive side: once a timing run asks, no new correctness run starts until it has finished, and
it starts as soon as those already running are done.

Given a lock file (`gpu_lock_path`: one per physical GPU, named by its UUID), the same holds between
processes: two searches on one runner — parallel CI jobs, a bench split over processes — never time on
a GPU while the other uses it. Across processes it is `flock` on two files: holders take the turnstile
file exclusively on their way in (a timing run keeps it while it waits), then the main file shared or
exclusive. Each hold opens its own descriptors (flock locks belong to open file descriptions), so
threads of one process are separate holders too; the kernel drops them if the process dies."""

from __future__ import annotations

import fcntl
import logging
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)

Token = tuple[int, ...]  # the descriptors of one hold on the lock files (empty without files)


class DeviceLock:
    def __init__(self, path: Path | None = None) -> None:
        self.cond = threading.Condition()
        self.sharing = 0  # correctness runs holding the device (this process)
        self.exclusive_held = False
        self.exclusive_waiting = 0
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    # -- between processes ------------------------------------------------------------------------

    def open_lock(self, suffix: str) -> int:
        assert self.path is not None
        fd = os.open(f"{self.path}{suffix}", os.O_RDWR | os.O_CREAT, 0o666)
        return fd

    def file_hold(self, mode: int) -> Token:
        if self.path is None:
            return ()
        turnstile = self.open_lock(".turnstile")
        try:
            fcntl.flock(turnstile, fcntl.LOCK_EX)  # a waiting timing run holds this: newcomers queue
            main = self.open_lock("")
            try:
                fcntl.flock(main, mode)
            except BaseException:
                os.close(main)
                raise
        finally:
            os.close(turnstile)  # closing drops its flock
        return (main,)

    @staticmethod
    def file_release(token: Token) -> None:
        for fd in token:
            os.close(fd)

    # -- shared / exclusive -----------------------------------------------------------------------

    def acquire_shared(self) -> Token:
        with self.cond:
            while self.exclusive_held or self.exclusive_waiting:
                self.cond.wait()
            self.sharing += 1
        try:
            return self.file_hold(fcntl.LOCK_SH)
        except BaseException:
            self.release_shared(())
            raise

    def release_shared(self, token: Token = ()) -> None:
        with self.cond:
            if self.sharing <= 0:
                raise RuntimeError("release_shared without acquire_shared")
            self.file_release(token)
            self.sharing -= 1
            if self.sharing == 0:
                self.cond.notify_all()

    def acquire_exclusive(self) -> Token:
        with self.cond:
            self.exclusive_waiting += 1
            try:
                while self.exclusive_held or self.sharing:
                    self.cond.wait()
            finally:
                self.exclusive_waiting -= 1
            self.exclusive_held = True
        try:
            return self.file_hold(fcntl.LOCK_EX)
        except BaseException:
            self.release_exclusive(())
            raise

    def release_exclusive(self, token: Token = ()) -> None:
        with self.cond:
            if not self.exclusive_held:
                raise RuntimeError("release_exclusive without acquire_exclusive")
            self.file_release(token)
            self.exclusive_held = False
            self.cond.notify_all()

    @contextmanager
    def shared(self) -> Iterator[None]:
        token = self.acquire_shared()
        try:
            yield
        finally:
            self.release_shared(token)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        token = self.acquire_exclusive()
        try:
            yield
        finally:
            self.release_exclusive(token)


def lock_dir() -> Path:
    """FOUNDRY_LOCK_DIR, or a directory under the system's temporary directory that every job on the
    machine sees."""
    configured = os.environ.get("FOUNDRY_LOCK_DIR")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "foundry-gpu-locks"


def gpu_lock_path(index: int) -> Path:
    """The lock file of the GPU this process calls cuda:index, named by the device's UUID (the same
    for every process, whatever CUDA_VISIBLE_DEVICES each one has)."""
    import torch

    uuid = str(getattr(torch.cuda.get_device_properties(index), "uuid", "") or f"index-{index}")
    return lock_dir() / f"gpu-{uuid}.lock"


class DeviceGate:
    """One evaluation's hold on a DeviceLock (or on nothing, without a GPU): shared or exclusive as its
    stages need the device, free between them (`free`); `release` ends it, is safe to call in any state
    and twice, and a released gate takes the device no more."""

    def __init__(self, lock: DeviceLock | None) -> None:
        self.lock = lock
        self.state = "free"
        self.token: Token = ()

    def share(self) -> None:
        if self.lock is not None and self.state == "free":
            self.token = self.lock.acquire_shared()
            self.state = "shared"

    def exclude(self) -> None:
        if self.state == "shared":
            self.free()  # the shared hold goes back before the exclusive one is taken
        if self.lock is not None and self.state == "free":
            self.token = self.lock.acquire_exclusive()
            self.state = "exclusive"

    def free(self) -> None:
        """Give back whatever is held, and stay usable: the next share or exclude takes the device again."""
        if self.lock is None or self.state not in ("shared", "exclusive"):
            return
        if self.state == "shared":
            self.lock.release_shared(self.token)
        else:
            self.lock.release_exclusive(self.token)
        self.state = "free"

    def release(self) -> None:
        self.free()
        if self.lock is not None:
            self.state = "done"


class Admission:
    """How many of one evaluator's candidates are in flight on its GPU at once: at most `limit`. A candidate that
    ran out of device memory beside others lowers it to one fewer than the limit it was admitted under (never
    below one), so that a search with more workers than the device holds settles at what it holds instead of
    evaluating every candidate alone; candidates that ran out together, under the same limit, lower it once."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.active = 0
        self.cond = threading.Condition()

    @contextmanager
    def slot(self) -> Iterator[int]:
        """Yields the limit this candidate was admitted under (for shrink)."""
        with self.cond:
            while self.active >= self.limit:
                self.cond.wait()
            self.active += 1
            admitted = self.limit
        try:
            yield admitted
        finally:
            with self.cond:
                self.active -= 1
                self.cond.notify_all()

    def shrink(self, admitted: int) -> None:
        with self.cond:
            lower = max(1, admitted - 1)
            if lower < self.limit:
                self.limit = lower
                log.info("out of device memory beside others: %d candidates in flight from now on", self.limit)
