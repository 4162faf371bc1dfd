"""The DuckDB file: where it lives, how it is opened, migrated and written.

DuckDB lets one process at a time open a file for writing, and holds the lock for as long as the
connection is open. So every unit of work opens the file, runs one short transaction and closes it;
a process that finds the file locked retries with jittered exponential backoff, for a bounded time.
Processes of this bot first queue on an advisory lock beside the file (`<file>.lock`, flock: polling
it costs microseconds, where a refused DuckDB open costs a whole database start-up, and the kernel
releases it when a holder dies); DuckDB's own lock still guards against any other program.
A committed transaction survives a crash (DuckDB's write-ahead log); an open one is rolled back.
A file that DuckDB cannot read is reported and left exactly as it is.
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: DuckDB's own lock and the retry loop remain
    fcntl = None  # type: ignore[assignment]

from foundry.experience.errors import (
    CorruptLibraryError,
    ExperienceError,
    LibraryBusyError,
    SchemaTooNewError,
)
from foundry.experience.schema import MIGRATIONS, Migration

log = logging.getLogger(__name__)

T = TypeVar("T")

ENV_PATH = "FOUNDRY_EXPERIENCE_DB"
LOCK_TIMEOUT_S = 60.0  # how long a writer waits for others before giving up
BACKOFF_FIRST_S = 0.005
BACKOFF_MAX_S = 0.25
QUEUE_POLL_MAX_S = 0.01  # polling the advisory lock is cheap: stay responsive
CONNECT_CONFIG = {"threads": 1}  # short transactions on small tables; more threads only cost start-up
MOVE_AWAY = "move it away or point FOUNDRY_EXPERIENCE_DB at another path to start a new library"


def default_path() -> Path:
    """FOUNDRY_EXPERIENCE_DB, else $XDG_CACHE_HOME (or ~/.cache)/kernel-foundry/experience.duckdb."""
    env = os.environ.get(ENV_PATH)
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "kernel-foundry" / "experience.duckdb"


def resolve_path(path: str | os.PathLike[str] | None) -> Path:
    return Path(path).expanduser() if path else default_path()


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def is_lock_conflict(exc: BaseException) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


def is_transaction_conflict(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.TransactionException) or "Conflict on" in str(exc)


class QueueLock:
    """An exclusive flock on `<db>.lock`, acquired with a deadline. Released on close or process death."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self.fd: int | None = None

    def acquire(self, deadline: float) -> bool:
        """True when held; False when the deadline passed first."""
        if fcntl is None:
            return True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise ExperienceError(f"{self.path}: cannot create the experience library's lock file: {exc}") from exc
        delay = 0.0005
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.fd = fd
                return True
            except BlockingIOError:
                if time.monotonic() + delay > deadline:
                    os.close(fd)
                    return False
                time.sleep(delay * random.uniform(0.5, 1.5))
                delay = min(delay * 2, QUEUE_POLL_MAX_S)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor drops the flock
            self.fd = None


class Database:
    """One experience-library file. Cheap to create; opens the file only inside `run`."""

    def __init__(
        self,
        path: Path,
        *,
        lock_timeout: float = LOCK_TIMEOUT_S,
        migrations: Sequence[Migration] = MIGRATIONS,
        on_first_open: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    ) -> None:
        self.path = path
        self.lock_timeout = lock_timeout
        self.migrations = tuple(migrations)
        self.latest = self.migrations[-1].version
        self.on_first_open = on_first_open
        self.prepared = False

    # -- opening ------------------------------------------------------------------------------

    def connect(self, deadline: float) -> duckdb.DuckDBPyConnection:
        delay = BACKOFF_FIRST_S
        attempts = 0
        while True:
            attempts += 1
            try:
                return duckdb.connect(str(self.path), config=CONNECT_CONFIG)
            except duckdb.Error as exc:
                if not is_lock_conflict(exc):
                    raise self.unreadable(exc) from exc
                if time.monotonic() + delay > deadline:
                    why = f"another program holds the database open; {attempts} attempts: {exc}"
                    raise self.busy(self.lock_timeout, why) from exc
                time.sleep(delay * random.uniform(0.5, 1.5))
                delay = min(delay * 2, BACKOFF_MAX_S)

    def unreadable(self, exc: BaseException) -> ExperienceError:
        return CorruptLibraryError(
            f"{self.path}: cannot open the experience library ({exc}). The file was left untouched; {MOVE_AWAY}."
        )

    # -- units of work ------------------------------------------------------------------------

    def run(self, work: Callable[[duckdb.DuckDBPyConnection], T], *, timeout: float | None = None) -> T:
        """Open the file, run `work` in one transaction, commit, close. Retries lock conflicts and
        transaction conflicts until the deadline; anything else propagates (the transaction rolls
        back, nothing half-written stays)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        wait = self.lock_timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        queue = QueueLock(self.path)
        if not queue.acquire(deadline):
            raise self.busy(wait, f"other Kernel Foundry processes held {queue.path.name}")
        try:
            return self.run_locked(work, deadline)
        finally:
            queue.release()

    def busy(self, wait: float, why: str) -> LibraryBusyError:
        return LibraryBusyError(
            f"{self.path}: the experience library stayed locked for {wait:g} s ({why}); nothing was written."
        )

    def run_locked(self, work: Callable[[duckdb.DuckDBPyConnection], T], deadline: float) -> T:
        delay = BACKOFF_FIRST_S
        while True:
            con = self.connect(deadline)
            try:
                self.prepare(con)
                con.execute("BEGIN TRANSACTION")
                result = work(con)
                con.execute("COMMIT")
                return result
            except duckdb.Error as exc:
                rollback(con)
                if not is_transaction_conflict(exc) or time.monotonic() + delay > deadline:
                    if isinstance(exc, duckdb.IOException | duckdb.SerializationException):
                        raise self.unreadable(exc) from exc
                    raise
                log.debug("transaction conflict on %s, retrying: %s", self.path, exc)
            finally:
                con.close()
            time.sleep(delay * random.uniform(0.5, 1.5))
            delay = min(delay * 2, BACKOFF_MAX_S)

    def prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        """Check the schema version on every open (another bot may have migrated the file since);
        migrate an older file; run the first-open hook (seed loading) once per process."""
        version = self.schema_version(con)
        if version > self.latest:
            raise SchemaTooNewError(
                f"{self.path}: the experience library has schema version {version}, but this bot knows "
                f"versions up to {self.latest}. It was written by a newer Kernel Foundry; upgrade the bot "
                f"(pip install -U kernel-foundry) or point FOUNDRY_EXPERIENCE_DB at another file."
            )
        if version < self.latest:
            self.migrate(con, version)
        if not self.prepared:
            if self.on_first_open is not None:
                con.execute("BEGIN TRANSACTION")
                try:
                    self.on_first_open(con)
                    con.execute("COMMIT")
                except BaseException:
                    rollback(con)
                    raise
            self.prepared = True

    def schema_version(self, con: duckdb.DuckDBPyConnection) -> int:
        tables = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
                "AND schema_name = 'main'"
            ).fetchall()
        }
        if "meta" not in tables:
            if tables:
                raise CorruptLibraryError(
                    f"{self.path}: this DuckDB file holds tables ({', '.join(sorted(tables)[:5])}) but is "
                    f"not a Kernel Foundry experience library. It was left untouched; {MOVE_AWAY}."
                )
            return 0
        row = first(con.execute("SELECT value FROM meta WHERE key = 'schema_version'"))
        if row is None or not str(row[0]).isdigit():
            raise CorruptLibraryError(
                f"{self.path}: the experience library has no valid schema version (meta.schema_version = "
                f"{row[0] if row else 'missing'!r}). It was left untouched; {MOVE_AWAY}."
            )
        return int(row[0])

    def migrate(self, con: duckdb.DuckDBPyConnection, current: int) -> None:
        for migration in self.migrations:
            if migration.version <= current:
                continue
            con.execute("BEGIN TRANSACTION")
            try:
                # Re-read inside the transaction: another process may have migrated meanwhile.
                if self.schema_version(con) >= migration.version:
                    con.execute("ROLLBACK")
                    continue
                for statement in migration.statements:
                    con.execute(statement)
                con.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE "
                    "SET value = excluded.value",
                    [str(migration.version)],
                )
                con.execute("COMMIT")
            except BaseException:
                rollback(con)
                raise
            log.info(
                "experience library %s: migrated to schema %d (%s)", self.path, migration.version, migration.description
            )


def first(cursor: duckdb.DuckDBPyConnection) -> tuple[Any, ...] | None:
    """The first row, with the result consumed (an unfinished result blocks register() and others)."""
    rows = cursor.fetchall()
    return rows[0] if rows else None


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass  # no transaction was open
