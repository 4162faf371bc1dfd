"""Runs whose process ended without finishing do not stay `running`: an interrupted run (Ctrl-C, SIGTERM)
is closed as interrupted, and a killed one is marked so when the library is next opened. Runs a live
process still owns, here or on another machine, are left alone."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from experience_factories import GPU, candidate, softmax_sig, spec, verified
from foundry.experience import ExperienceStore

ROOT = Path(__file__).resolve().parents[2]


def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def reopen(path: Path) -> ExperienceStore:
    return ExperienceStore(path, seeds=())  # a new process's first open, as far as the library can tell


def test_a_run_this_process_still_owns_stays_running(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    session = store.start_run(spec(), softmax_sig(), gpu=GPU, run_id="live")
    session.record(spec(), candidate("a"), verified("a"))
    assert reopen(store.path).run_row("live").outcome == "running"
    session.finish("improved")
    assert reopen(store.path).run_row("live").outcome == "improved"
    assert list(store.live.dir.iterdir()) == []  # the marker goes with the outcome


def test_a_run_whose_process_ended_is_marked_interrupted_on_the_next_open(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    session = store.start_run(spec(), softmax_sig(), gpu=GPU, run_id="gone")
    session.record(spec(), candidate("a"), verified("a"))
    marker = store.live.marker("gone")
    marker.write_text(json.dumps({"run_id": "gone", "host": socket.gethostname(), "pid": dead_pid()}))
    run = reopen(store.path).run_row("gone")
    assert run is not None and run.outcome == "interrupted" and (run.evaluated, run.verified) == (1, 1)
    assert not marker.exists()


def test_a_run_of_another_host_is_left_alone(tmp_path: Path) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    store.start_run(spec(), softmax_sig(), gpu=GPU, run_id="elsewhere")
    owner = {"run_id": "elsewhere", "host": socket.gethostname() + "-other", "pid": dead_pid()}
    store.live.marker("elsewhere").write_text(json.dumps(owner))
    assert reopen(store.path).run_row("elsewhere").outcome == "running"


@pytest.mark.parametrize("error, outcome", [(KeyboardInterrupt, "interrupted"), (RuntimeError, "crashed")])
def test_a_session_left_by_an_exception_says_how_it_ended(
    tmp_path: Path, error: type[BaseException], outcome: str
) -> None:
    store = ExperienceStore(tmp_path / "lib.duckdb", seeds=())
    with pytest.raises(error), store.start_run(spec(), softmax_sig(), gpu=GPU, run_id="r"):
        raise error()
    assert store.run_row("r").outcome == outcome


@pytest.mark.slow
def test_sigterm_to_a_search_ends_its_run_as_interrupted(tmp_path: Path) -> None:
    db = tmp_path / "lib.duckdb"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "bot"), "FOUNDRY_EXPERIENCE_DB": str(db)}
    operator = ROOT / "examples" / "ops" / "softmax.py"
    command = [sys.executable, "-m", "foundry", "-v", "optimize", str(operator), "--budget", "64", "--islands", "1"]
    proc = subprocess.Popen(
        [*command, "--out", str(tmp_path / "out")], env=env, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + 240
    for line in proc.stderr:  # the run is in the library once retrieval has been logged
        seen.append(line)
        if "experience:" in line or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGTERM)
    rest = proc.communicate(timeout=240)[1]
    assert proc.returncode == 128 + signal.SIGTERM, "".join(seen) + rest
    assert "foundry: terminated" in rest
    (run,) = reopen(db).read_table("runs")
    assert run.outcome == "interrupted"
