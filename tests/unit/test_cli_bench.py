"""`foundry bench` without a GPU: there is nothing to time, so it says so and exits 2 at once, before a
search (which took minutes only to print a table with no times)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch
from foundry.cli import main

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = ROOT / "examples" / "ops" / "softmax.py"

pytestmark = pytest.mark.skipif(torch.cuda.is_available(), reason="bench times kernels where a GPU is visible")


def test_bench_without_a_gpu_exits_2_before_searching(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench.json"
    started = time.monotonic()
    code = main(["bench", str(OPERATOR), "--budget", "1", "--islands", "1", "--out", str(out)])
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 2, err
    assert "foundry: error: bench times kernels and timing needs a CUDA GPU; none is visible" in err
    assert "foundry check OPERATOR KERNEL" in err and "--allow-cpu" in err
    assert "searching" not in err and "generation" not in err and not out.exists()
    assert elapsed < 10, f"bench took {elapsed:.0f} s to refuse"


def test_bench_without_a_gpu_refuses_given_kernels_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kernel = tmp_path / "kernel.py"
    kernel.write_text("raise SystemExit('bench must not load the kernel')\n")
    assert main(["bench", f"{OPERATOR}={kernel}"]) == 2
    assert "timing needs a CUDA GPU" in capsys.readouterr().err
