"""`foundry optimize` and `foundry bench` as a user runs them: a real subprocess, the LLM writer
against the local OpenAI-compatible server, the real evaluator and a real DuckDB experience file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from foundry.core.records import RunReport
from llm_server import FIXTURES, ScriptedLLM, kernel_reply

pytestmark = [pytest.mark.interp, pytest.mark.e2e, pytest.mark.slow]

OPERATOR = str(FIXTURES / "scaled_relu.py")
CUDA = torch.cuda.is_available()


def foundry(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ) | (env or {})
    root = Path(__file__).resolve().parents[2]
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "bot"), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "foundry", *args], capture_output=True, text=True, env=full_env, cwd=cwd, timeout=600
    )


def test_optimize_writes_kernel_reports_and_history_and_the_library_remembers(tmp_path):
    db = tmp_path / "experience.duckdb"
    steps = [kernel_reply("broken"), kernel_reply("fixed")]
    with ScriptedLLM(steps) as llm:
        env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test-key", "FOUNDRY_EXPERIENCE_DB": str(db)}
        out = tmp_path / "out"
        done = foundry(
            "optimize",
            OPERATOR,
            "--writer",
            "llm",
            "--budget",
            "2",
            "--islands",
            "1",
            "--seed",
            "1",
            "--out",
            str(out),
            "--json",
            env=env,
        )
        assert len(llm.requests) == 2
        assert "Fix the parent" in llm.prompt(1) and "[correctness/mismatch]" in llm.prompt(1)
    assert done.returncode == 0, done.stderr
    report = RunReport.model_validate_json(done.stdout)
    assert report == RunReport.model_validate_json((out / "report.json").read_text())
    assert report.verified and report.evaluated == 2
    assert report.timing_measured == CUDA
    assert report.best is not None and report.best.source == (FIXTURES / "kernel_fixed.py").read_text()
    assert report.failures == {"mismatch": 1}
    if not CUDA:
        assert any("timing was not measured" in n for n in report.notes)
        assert "timing was not measured" in done.stderr
    else:
        assert "over eager" in done.stderr

    kernel = (out / "kernel.py").read_text()
    header = kernel.split("\n\n")[0]
    assert "operator: " in header and "scaled_relu.py::Model" in header and "dtype float32" in header
    assert f"GPU: {report.device}" in header and "verification: policy strict" in header
    if CUDA:
        assert "x over eager" in header and "x over torch.compile" in header and "median of" in header
    else:
        assert "GPU: cpu (Triton interpreter)" in header and "speed: not measured" in header
    assert kernel.endswith(report.best.source)
    compile(kernel, "kernel.py", "exec")

    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert [h["verdict"]["verified"] for h in history] == [False, True]
    assert history[1]["candidate"]["parent_id"] == history[0]["candidate"]["id"]
    assert (out / "report.md").read_text().strip()

    # The verified kernel checks out on its own, the way a reviewer would check it.
    check = foundry("check", OPERATOR, str(out / "kernel.py"))
    assert check.returncode == 0, check.stderr

    # A second run retrieves the kernel from the library and re-verifies it in generation 0.
    with ScriptedLLM([kernel_reply("wide")]) as llm:
        env["OPENAI_BASE_URL"] = llm.base_url
        again = foundry(
            "optimize",
            OPERATOR,
            "--writer",
            "llm",
            "--budget",
            "2",
            "--islands",
            "1",
            "--out",
            str(tmp_path / "again"),
            "--json",
            env=env,
        )
    assert again.returncode == 0, again.stderr
    second = RunReport.model_validate_json(again.stdout)
    assert second.experience.retrieved_kernels, second.experience
    assert second.evaluated == 2
    # It reaches the first run's best at its first evaluation; the first run needed two.
    warm = [json.loads(line) for line in (tmp_path / "again" / "history.jsonl").read_text().splitlines()]
    assert warm[0]["candidate"]["source"] == report.best.source and warm[0]["verdict"]["verified"]
    assert warm[0]["candidate"]["id"].startswith("lib-")


def test_bad_input_exits_2(tmp_path):
    missing = foundry("optimize", str(tmp_path / "nope.py"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 2 and "no such operator file" in missing.stderr
    budget = foundry("optimize", OPERATOR, "--budget", "0", "--out", str(tmp_path / "o"))
    assert budget.returncode == 2 and "--budget must be at least 1" in budget.stderr
    no_llm = foundry("optimize", OPERATOR, "--writer", "llm", "--out", str(tmp_path / "o"), "--no-experience")
    assert no_llm.returncode == 2 and "OPENAI_API_KEY" in no_llm.stderr
    assert not (tmp_path / "o" / "kernel.py").exists()


def test_bench_times_given_kernels_side_by_side_or_says_it_needs_a_gpu(tmp_path):
    good = f"{OPERATOR}={FIXTURES / 'kernel_correct.py'}"
    bad = f"{OPERATOR}={FIXTURES / 'kernel_cheat.py'}"
    out = tmp_path / "bench.json"
    done = foundry("bench", good, bad, "--out", str(out), "--allow-cpu")
    assert done.returncode == 1  # one of the two kernels is rejected
    report = json.loads(out.read_text())
    rows = report["rows"]
    assert [r["verified"] for r in rows] == [True, False]
    assert "runtime_guard" in rows[1]["failure"]
    assert report["aggregate"]["operators"] == 2 and report["aggregate"]["verified"] == 1
    if CUDA:
        assert rows[0]["measured"] and rows[0]["eager_ms"] and rows[0]["compile_ms"] and rows[0]["foundry_ms"]
        assert report["aggregate"]["geomean_speedup_eager"] is not None
    else:
        assert "timing needs a GPU" in done.stderr
        assert not rows[0]["measured"] and rows[0]["foundry_ms"] is None
        assert report["aggregate"]["geomean_speedup_eager"] is None


def test_a_bench_cut_short_keeps_the_operators_it_finished(tmp_path):
    good = f"{OPERATOR}={FIXTURES / 'kernel_correct.py'}"
    broken_operator = tmp_path / "broken_op.py"
    broken_operator.write_text("this is not python\n")
    out = tmp_path / "bench.json"
    done = foundry(
        "bench", good, f"{broken_operator}={FIXTURES / 'kernel_correct.py'}", "--out", str(out), "--allow-cpu"
    )
    assert done.returncode == 2 and "broken_op.py" in done.stderr
    report = json.loads(out.read_text())
    assert [r["verified"] for r in report["rows"]] == [True]
    assert "partial: 1 of 2 operators still to run" in report["notes"]
    assert not (tmp_path / "bench.json.tmp").exists()
