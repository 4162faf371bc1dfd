"""`foundry experience stats|top|export|import` on real library files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from experience_factories import GPU, candidate, rejected, softmax_sig, spec, verified
from foundry.cli import main
from foundry.experience import ExperienceStore, HintResult


def populate(path: Path, repo: str = "acme/llm") -> None:
    store = ExperienceStore(path)
    run = store.start_run(spec(), softmax_sig(), repo=repo, gpu=GPU, run_id=f"run-{repo}")
    run.record(spec(), candidate("a", BLOCK_SIZE=4096), verified("a", speedup=2.5))
    run.record(spec(), candidate("b"), rejected("b"))
    run.finish("improved", applied_hints={"online-softmax": HintResult(success=True, speedup=2.5)})


def test_stats_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "lib.duckdb"
    populate(db)
    assert main(["experience", "stats", "--db", str(db), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["runs"] == 1 and stats["candidates"] == 2 and stats["verified"] == 1
    assert stats["outcomes"] == {"improved": 1} and stats["repositories"] == {"acme/llm": 2}
    assert stats["best_kernels"] == 1 and stats["hint_uses"] == 1 and stats["hints"] == stats["seed_hints"] > 20
    assert stats["families"] == {"reduction+softmax": 1}


def test_stats_uses_the_environment_path(tmp_path: Path, monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "env.duckdb"
    populate(db)
    monkeypatch.setenv("FOUNDRY_EXPERIENCE_DB", str(db))
    assert main(["experience", "stats"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""  # human output goes to stderr
    assert str(db) in captured.err and "candidates    2  (1 verified)" in captured.err


def test_top_lists_best_kernels_and_useful_hints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "lib.duckdb"
    populate(db)
    assert main(["experience", "top", "--db", str(db), "-n", "3", "--json"]) == 0
    top = json.loads(capsys.readouterr().out)
    assert [(k["operator"], k["speedup"], k["genes"]) for k in top["kernels"]] == [
        ("softmax", 2.5, {"BLOCK_SIZE": 4096})
    ]
    assert top["hints"][0]["id"] == "online-softmax" and top["hints"][0]["successes"] == 1
    assert len(top["hints"]) == 3
    assert main(["experience", "top", "--db", str(db)]) == 0
    assert "2.50x  softmax" in capsys.readouterr().err


def test_export_import_round_trip_through_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    populate(tmp_path / "a.duckdb")
    export = tmp_path / "out" / "a.parquet"
    assert main(["experience", "export", str(export), "--db", str(tmp_path / "a.duckdb")]) == 0
    assert export.is_file()
    capsys.readouterr()
    argv = ["experience", "import", str(export), "--db", str(tmp_path / "b.duckdb"), "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["added"]["candidates"] == 2
    assert main(argv) == 0
    assert sum(json.loads(capsys.readouterr().out)["added"].values()) == 0


def test_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corrupt = tmp_path / "corrupt.duckdb"
    corrupt.write_bytes(b"\x00garbage" * 100)
    assert main(["experience", "stats", "--db", str(corrupt)]) == 2
    assert "left untouched" in capsys.readouterr().err
    assert main(["experience", "import", str(tmp_path / "missing.parquet"), "--db", str(tmp_path / "x.duckdb")]) == 2
    assert "no such export file" in capsys.readouterr().err


def test_module_entry_point(tmp_path: Path) -> None:
    db = tmp_path / "lib.duckdb"
    populate(db)
    out = subprocess.run([sys.executable, "-m", "foundry", "experience", "stats", "--db", str(db), "--json"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    assert json.loads(out.stdout)["candidates"] == 2
