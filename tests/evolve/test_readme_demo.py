"""The README's demo, as a user on a CPU machine without an LLM runs it: the template writer, the
real evaluator under the Triton interpreter, a real experience file. It must finish in a few minutes
with a verified kernel, and say that timing was not measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from foundry.core.records import RunReport

pytestmark = [pytest.mark.interp, pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU demo; the GPU path is timed by the GPU tier")
def test_optimize_softmax_with_budget_8_on_cpu(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "bot"), env.get("PYTHONPATH")]))
    env["FOUNDRY_EXPERIENCE_DB"] = str(tmp_path / "experience.duckdb")
    out = tmp_path / "foundry-out" / "softmax"
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "foundry",
            "optimize",
            "examples/ops/softmax.py",
            "--budget",
            "8",
            "--out",
            str(out),
            "--json",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    assert elapsed < 300, f"the demo took {elapsed:.0f} s"
    report = RunReport.model_validate_json(done.stdout)
    assert report.verified and report.best is not None and report.best_verdict is not None
    assert report.best_verdict.verified and not report.timing_measured
    assert report.evaluated == 8 and report.budget == 8
    assert [s.expert for s in report.islands] == ["fusion", "memory_access", "tiling_launch", "compute_restructuring"]
    assert all(s.evaluated == 2 for s in report.islands)  # no island starves on duplicates
    assert "timing was not measured" in done.stderr
    kernel = (out / "kernel.py").read_text()
    assert kernel.endswith(report.best.source)
    # one provenance header (comments: operator, GPU, verification, candidate) and the genes stated once, by
    # the kernel's module docstring
    header = kernel[: len(kernel) - len(report.best.source)]
    assert header.startswith("# Kernel Foundry: a verified Triton kernel") and "genes" not in header
    assert kernel.count("# Kernel Foundry: a verified Triton kernel") == 1
    assert kernel.count("Launch settings (the search's genes):") == 1
    assert len((out / "history.jsonl").read_text().splitlines()) == 8
    assert json.loads((out / "report.json").read_text())["verified"] is True
    assert "not measured" in (out / "report.md").read_text()
