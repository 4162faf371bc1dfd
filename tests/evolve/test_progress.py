"""The live display on a terminal, and plain log lines when stderr is not one."""

from __future__ import annotations

import io
import logging

from foundry.core.records import IslandSummary
from foundry.evolve.progress import LogProgress, ProgressState, RichProgress, make_progress

STATE = ProgressState(
    generation=3,
    evaluated=14,
    budget=32,
    elapsed_s=42.0,
    measured=False,
    generation_done=True,
    islands=(
        IslandSummary(
            island=0,
            expert="fusion",
            evaluated=8,
            verified=5,
            best_score=0.5,
            failures={"mismatch": 2, "compile_error": 1},
        ),
        IslandSummary(island=1, expert="memory_access", evaluated=6, verified=0, failures={"runtime_guard": 6}),
    ),
)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_log_lines_when_not_a_terminal(caplog):
    progress = make_progress(io.StringIO())
    assert isinstance(progress, LogProgress)
    with caplog.at_level(logging.INFO, logger="foundry.evolve.progress"):
        progress.update(STATE)
        progress.message("island 1 received an elite")
    text = caplog.text
    assert "generation 3: 14/32 candidates evaluated" in text
    assert "island 0 [fusion] evaluated 8 verified 5 best 0.500 est. failures: compile_error 1, mismatch 2" in text
    assert "island 1 [memory_access] evaluated 6 verified 0 best - failures: runtime_guard 6" in text
    assert "island 1 received an elite" in text


def test_a_live_table_on_a_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    terminal = Terminal()
    progress = make_progress(terminal)
    assert isinstance(progress, RichProgress)
    progress.update(STATE)
    progress.close()
    out = terminal.getvalue()
    for needle in (
        "generation 3",
        "14/32",
        "fusion",
        "memory_access",
        "0.500 est.",
        "runtime_guard 6",
        "timing not measured",
    ):
        assert needle in out, needle
