"""One GPU, several candidates in flight, one timing at a time.

Correctness work of several candidates may share a GPU (their numbers do not depend on who else runs),
but a timing run must have the device to itself. `DeviceLock` is a shared/exclusive lock that prefers
the exclusive side: once a timing run asks, no new correctness run starts until it has finished, and
it starts as soon as those already running are done."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class DeviceLock:
    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.sharing = 0  # correctness runs holding the device
        self.exclusive_held = False
        self.exclusive_waiting = 0

    def acquire_shared(self) -> None:
        with self.cond:
            while self.exclusive_held or self.exclusive_waiting:
                self.cond.wait()
            self.sharing += 1

    def release_shared(self) -> None:
        with self.cond:
            if self.sharing <= 0:
                raise RuntimeError("release_shared without acquire_shared")
            self.sharing -= 1
            if self.sharing == 0:
                self.cond.notify_all()

    def acquire_exclusive(self) -> None:
        with self.cond:
            self.exclusive_waiting += 1
            try:
                while self.exclusive_held or self.sharing:
                    self.cond.wait()
            finally:
                self.exclusive_waiting -= 1
            self.exclusive_held = True

    def release_exclusive(self) -> None:
        with self.cond:
            if not self.exclusive_held:
                raise RuntimeError("release_exclusive without acquire_exclusive")
            self.exclusive_held = False
            self.cond.notify_all()

    @contextmanager
    def shared(self) -> Iterator[None]:
        self.acquire_shared()
        try:
            yield
        finally:
            self.release_shared()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        self.acquire_exclusive()
        try:
            yield
        finally:
            self.release_exclusive()


class DeviceGate:
    """One evaluation's hold on a DeviceLock (or on nothing, without a GPU): shared, then exclusive,
    then released, each step at most once; `release` is safe to call in any state and twice."""

    def __init__(self, lock: DeviceLock | None) -> None:
        self.lock = lock
        self.state = "free"

    def share(self) -> None:
        if self.lock is not None and self.state == "free":
            self.lock.acquire_shared()
            self.state = "shared"

    def unshare(self) -> None:
        if self.lock is not None and self.state == "shared":
            self.lock.release_shared()
            self.state = "free"

    def exclude(self) -> None:
        self.unshare()
        if self.lock is not None and self.state == "free":
            self.lock.acquire_exclusive()
            self.state = "exclusive"

    def release(self) -> None:
        if self.lock is None:
            return
        if self.state == "shared":
            self.lock.release_shared()
        elif self.state == "exclusive":
            self.lock.release_exclusive()
        self.state = "done" if self.state != "free" else "free"
