"""Several processes on one library file: nothing lost, crashes leave it consistent, waits are bounded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest
from experience_factories import GPU, candidate, softmax_sig, spec, verified
from foundry.experience import ExperienceStore, LibraryBusyError

HERE = Path(__file__).resolve().parent
WRITER = HERE / "experience_factories.py"


def env() -> dict[str, str]:
    pythonpath = os.pathsep.join([str(HERE), str(HERE.parents[1] / "bot"), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": pythonpath}


@pytest.mark.slow
def test_eight_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    db, go = tmp_path / "lib.duckdb", tmp_path / "go"
    writers, per_writer = 8, 500
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), "write", str(db), f"w{i}", str(per_writer), "50", str(go)],
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for i in range(writers)
    ]
    time.sleep(0.5)  # let every interpreter reach the start line
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-2000:]

    store = ExperienceStore(db, seeds=())
    assert store.count("candidates") == writers * per_writer
    assert store.count("runs") == writers
    assert store.count("runs", "outcome = 'improved' AND evaluated = 500") == writers
    for i in range(writers):  # every record of every writer, by id
        ids = {r.candidate_id for r in store.read_table("candidates") if r.run_id == f"w{i}"}
        assert ids == {f"w{i}-{n}" for n in range(per_writer)}
    assert store.count("candidates", "verified") == writers * per_writer // 5
    assert store.count("best_kernels") == 1  # one signature, one GPU, one dtype: the fastest of all
    assert store.best_kernels()[0].speedup == pytest.approx(1.0 + 495 / 500)


def test_killed_writer_leaves_committed_records(tmp_path: Path) -> None:
    db = tmp_path / "lib.duckdb"
    script = textwrap.dedent(
        f"""
        import sys, time
        from experience_factories import *
        store = ExperienceStore({str(db)!r}, seeds=())
        session = store.start_run(spec(), softmax_sig(), repo="repo/kill", gpu=GPU, run_id="kill")
        for i in range(20):
            session.record(spec(), candidate(f"c{{i}}"), verified(f"c{{i}}"))
            print(f"committed c{{i}}", flush=True)
        def half_written(con):
            for i in range(20, 40):
                con.execute("INSERT INTO candidates SELECT * REPLACE ('x' || uid AS uid, 'u' || candidate_id AS "
                            "candidate_id) FROM candidates WHERE candidate_id = ?", [f"c{{i - 20}}"])
            print("MID", flush=True)
            time.sleep(60)
        store.db.run(half_written)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    committed = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("committed"):
            committed.append(line.split()[1])
        if line.strip() == "MID":
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert len(committed) == 20

    store = ExperienceStore(db, seeds=())
    rows = store.read_table("candidates")
    assert {r.candidate_id for r in rows} == set(committed)  # committed kept, the open transaction gone
    # the next open sees that no process owns the run any more: it was interrupted, with what it recorded
    run = store.run_row("kill")
    assert run is not None and run.outcome == "interrupted" and run.finished_at is not None
    assert (run.evaluated, run.verified) == (20, 20) and "process ended before the run finished" in run.notes
    assert not any(store.live.dir.iterdir())  # its marker is gone with it
    store.record_candidates([])  # and the file takes writes again
    assert store.count("candidates") == 20


def test_lock_wait_is_bounded_and_then_succeeds(tmp_path: Path) -> None:
    db = tmp_path / "lib.duckdb"
    store = ExperienceStore(db, seeds=())
    session = store.start_run(spec(), softmax_sig(), run_id="r1", gpu=GPU)
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(db)!r}); print('held', flush=True); "
                               "time.sleep(float(input()))"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        busy = ExperienceStore(db, seeds=(), lock_timeout=0.5)
        started = time.monotonic()
        with pytest.raises(LibraryBusyError, match="stayed locked"):
            busy.count("candidates")
        assert time.monotonic() - started < 5

        # the session keeps the record in memory while the file is busy, and writes it later
        session.flush_every = 1
        session.store = busy
        session.record(spec(), candidate("c1"), verified("c1"))
        assert len(session.pending) == 1
    finally:
        assert holder.stdin is not None
        holder.stdin.write("0\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    session.store = store
    session.finish("improved")
    assert store.count("candidates") == 1


def test_writer_waits_for_a_short_lock(tmp_path: Path) -> None:
    db = tmp_path / "lib.duckdb"
    store = ExperienceStore(db, seeds=(), lock_timeout=30)
    store.count("runs")  # create the file
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(db)!r}); print('held', flush=True); "
                               "time.sleep(0.8)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    session = store.start_run(spec(), softmax_sig(), run_id="r2", gpu=GPU)  # blocks until the holder exits
    holder.wait(timeout=30)
    assert session.run_id == "r2"
    assert store.run_row("r2") is not None


def test_file_is_a_plain_duckdb_database(tmp_path: Path) -> None:
    """What the library writes is readable by duckdb itself (no private format)."""
    db = tmp_path / "lib.duckdb"
    store = ExperienceStore(db, seeds=())
    store.start_run(spec(), softmax_sig(), run_id="r3", gpu=GPU)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT run_id FROM runs").fetchall() == [("r3",)]
    finally:
        con.close()


def test_finish_on_a_busy_library_saves_the_records_beside_it(tmp_path: Path) -> None:
    from foundry.experience import import_parquet

    db = tmp_path / "lib.duckdb"
    store = ExperienceStore(db, seeds=())
    session = store.start_run(spec(), softmax_sig(), run_id="r1", gpu=GPU, repo="acme/llm")
    session.record(spec(), candidate("c1"), verified("c1", speedup=1.5))
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, sys; c = duckdb.connect({str(db)!r}); print('held', flush=True); "
                               "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        session.store = ExperienceStore(db, seeds=(), lock_timeout=0.3)
        session.record(spec(), candidate("c2", parent="c1"), verified("c2", speedup=1.8))  # waits in memory
        note = session.finish("improved", best=candidate("c2", parent="c1"), best_verdict=verified("c2", speedup=1.9))
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    unsaved = tmp_path / "lib.duckdb.unsaved-r1.parquet"
    assert unsaved.is_file() and str(unsaved) in note.summary
    report = import_parquet(store, unsaved)
    assert report.added["candidates"] == 1 and report.added["hint_uses"] == 0
    rows = {r.candidate_id: r for r in store.read_table("candidates")}
    assert set(rows) == {"c1", "c2"} and rows["c2"].speedup == pytest.approx(1.9)
    assert rows["c2"].origin_repo == "acme/llm"
    assert store.best_kernels()[0].speedup == pytest.approx(1.9)
