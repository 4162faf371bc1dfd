"""Live progress of a search: a rich table on a terminal, plain log lines otherwise (CI logs)."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from typing import IO, Protocol

from foundry.core.records import IslandSummary

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProgressState:
    generation: int
    evaluated: int
    budget: int
    elapsed_s: float
    measured: bool  # speedups measured on a GPU, or static cost-model scores
    islands: tuple[IslandSummary, ...]
    generation_done: bool = False  # the plain log writes its island table only then


class Progress(Protocol):
    def update(self, state: ProgressState) -> None: ...

    def message(self, text: str) -> None: ...

    def close(self) -> None: ...


def best_label(summary: IslandSummary, measured: bool) -> str:
    if summary.best_score is None:
        return "-"
    if measured and summary.best_speedup is not None:
        return f"{summary.best_speedup:.2f}x"
    return f"{summary.best_score:.3f} est."


def failures_label(summary: IslandSummary) -> str:
    return ", ".join(f"{kind} {n}" for kind, n in sorted(summary.failures.items())) or "-"


class LogProgress:
    """One log line per island per generation: readable in CI logs and redirected stderr."""

    def update(self, state: ProgressState) -> None:
        if not state.generation_done:
            return
        log.info(
            "generation %d: %d/%d candidates evaluated, %.0f s",
            state.generation,
            state.evaluated,
            state.budget,
            state.elapsed_s,
        )
        for s in state.islands:
            log.info(
                "  island %d [%s] evaluated %d verified %d best %s failures: %s",
                s.island,
                s.expert,
                s.evaluated,
                s.verified,
                best_label(s, state.measured),
                failures_label(s),
            )

    def message(self, text: str) -> None:
        log.info("%s", text)

    def close(self) -> None:
        pass


class RichProgress:
    """A live table on the terminal, redrawn after every evaluated candidate."""

    def __init__(self, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=stream)
        self.live = Live(console=self.console, auto_refresh=False, transient=False)
        self.live.start()

    def update(self, state: ProgressState) -> None:
        from rich.table import Table

        best = "best speedup" if state.measured else "best score"
        note = "" if state.measured else " · timing not measured: static estimates"
        table = Table(
            title=f"generation {state.generation} · {state.evaluated}/{state.budget} candidates · "
            f"{state.elapsed_s:.0f} s{note}",
            title_justify="left",
        )
        for column in ("island", "expert", "gen", "evaluated", "verified", best, "failures by kind"):
            table.add_column(column)
        for s in state.islands:
            table.add_row(
                str(s.island),
                s.expert,
                str(state.generation),
                str(s.evaluated),
                str(s.verified),
                best_label(s, state.measured),
                failures_label(s),
            )
        self.live.update(table, refresh=True)

    def message(self, text: str) -> None:
        self.console.print(text)

    def close(self) -> None:
        self.live.stop()


class NoProgress:
    def update(self, state: ProgressState) -> None:
        pass

    def message(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


def make_progress(stream: IO[str] | None = None) -> Progress:
    """The rich display when the stream is a terminal, plain log lines otherwise."""
    stream = stream or sys.stderr
    if stream.isatty():
        return RichProgress(stream)
    return LogProgress()
