"""The status comment moves while operators are optimized: before each operator, while it runs (its
generation, read from the optimizer's log), and when it is done.

The log is written by the process that imports the operator's code, so it is read as data: only the
numbers of the optimizer's own progress line (`generation N: E/B candidates evaluated`) are taken from it.
Edits go only to the bot's own status comment of this run, only while it still says the run is going (a
`/foundry stop` that marked it stopped stays), and never create a comment. A token that may not edit
comments (a read-only optimize job) is answered 403 once: progress stops there and the run goes on."""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from foundry.github.api import GitHubApi, GitHubApiError
from foundry.github.status import RUNNING, running_body, stages_body, status_marker

log = logging.getLogger(__name__)

# LogProgress's line in `foundry optimize`'s log (evolve/progress.py, with the CLI's logging format)
GENERATION = re.compile(
    r"^INFO foundry\.evolve\.progress: generation (\d{1,6}): (\d{1,9})/(\d{1,9}) candidates evaluated", re.M
)
TAIL_BYTES = 64 * 1024  # the newest progress line is near the end; the log can grow large
DEFAULT_INTERVAL_S = 30.0  # how often the log is looked at (GitHub asks for no more than ~1 write a second)


@dataclass(frozen=True)
class Tick:
    """Where the search of the operator being optimized is, as its log says."""

    generation: int
    evaluated: int
    budget: int

    def text(self) -> str:
        return f"generation {self.generation}, {self.evaluated} of {self.budget} candidates evaluated"


def read_tick(path: Path) -> Tick | None:
    """The newest progress line of an optimizer log; None when there is none (yet)."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - TAIL_BYTES))
            tail = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    found = GENERATION.findall(tail)
    if not found:
        return None
    generation, evaluated, budget = (int(v) for v in found[-1])
    return Tick(generation=generation, evaluated=evaluated, budget=budget)


@contextlib.contextmanager
def watch(path: Path, interval_s: float, on_tick: Callable[[Tick], None]) -> Iterator[None]:
    """While the body runs, look at the log every interval_s and call on_tick when it says something new
    (from a thread of its own; it is joined before the body's caller goes on)."""
    stop = threading.Event()

    def loop() -> None:
        last: Tick | None = None
        while not stop.wait(interval_s):
            tick = read_tick(path)
            if tick is not None and tick != last:
                last = tick
                on_tick(tick)

    thread = threading.Thread(target=loop, name="foundry-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


class StatusProgress:
    """Edits one run's status comment with the optimize stage's progress (stages: the three-job form's
    body; otherwise the one-job form's)."""

    def __init__(
        self,
        api: GitHubApi,
        *,
        issue: int,
        comment_id: int,
        operators: Sequence[str],
        run_url: str,
        run_id: str,
        stages: bool,
    ) -> None:
        self.api = api
        self.issue = issue
        self.marker = status_marker(comment_id)
        self.operators = list(operators)
        self.run_url = run_url
        self.run_id = run_id
        self.stages = stages
        self.enabled = True
        self._lock = threading.Lock()

    def body(self, results: Mapping[str, str], current: str | None, detail: str) -> str:
        if self.stages:
            return stages_body(
                self.operators,
                stage="optimize",
                run_url=self.run_url,
                run_id=self.run_id,
                results=results,
                current=current,
                detail=detail,
            )
        return running_body(
            self.operators, run_url=self.run_url, run_id=self.run_id, results=results, current=current, detail=detail
        )

    def update(self, results: Mapping[str, str], current: str | None = None, detail: str = "") -> None:
        with self._lock:
            if not self.enabled:
                return
            try:
                if not self.api.edit_comment(
                    self.issue, self.marker, self.body(results, current, detail), only_if=RUNNING
                ):
                    log.info("the status comment is gone or no longer running: progress stops here")
                    self.enabled = False
            except GitHubApiError as exc:
                if exc.status in (401, 403, 404):
                    log.warning(
                        "the status comment cannot be edited from this job (%s): it shows the progress again when "
                        "publish runs (give the optimize job `issues: write` for progress)",
                        exc,
                    )
                    self.enabled = False
                else:
                    log.warning("status comment not updated: %s", exc)
