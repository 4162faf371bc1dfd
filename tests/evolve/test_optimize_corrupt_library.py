"""A corrupt experience library is reported and left untouched; the search goes on without it."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.interp, pytest.mark.slow]


def test_optimize_survives_a_corrupt_library(tmp_path: Path):
    db = tmp_path / "experience.duckdb"
    garbage = b"this is not a duckdb file" * 100
    db.write_bytes(garbage)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "FOUNDRY_EXPERIENCE_DB": str(db),
        "TRITON_INTERPRET": "1",
        "PYTHONPATH": str(ROOT / "bot"),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "foundry",
            "optimize",
            str(ROOT / "tests/cheats/operators/softmax_rows.py"),
            "--budget",
            "1",
            "--islands",
            "1",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "experience library unusable" in result.stderr
    assert db.read_bytes() == garbage  # never silently replaced
    assert (tmp_path / "out" / "kernel.py").is_file()
