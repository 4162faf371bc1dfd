"""`foundry check` without a GPU compiles a verified kernel for sm_90, as `optimize` does (it skipped that
step, so a kernel `optimize` would reject for the GPU could pass `check`)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from foundry.cli import main
from foundry.commands.optimize import static_compile_available
from foundry.core.records import Verdict

CHEATS = Path(__file__).resolve().parents[1] / "cheats"

pytestmark = [
    pytest.mark.interp,
    pytest.mark.slow,
    pytest.mark.skipif(torch.cuda.is_available(), reason="the static compile stands in for a GPU"),
    pytest.mark.skipif(not static_compile_available(), reason="this Triton has no NVIDIA backend"),
]


def test_check_compiles_the_verified_kernel_for_sm90(capsys: pytest.CaptureFixture[str]) -> None:
    operator = CHEATS / "operators" / "softmax_rows.py"
    candidate = CHEATS / "honest" / "softmax.py"
    assert main(["check", str(operator), str(candidate), "--trials", "1", "--json"]) == 0
    captured = capsys.readouterr()
    verdict = Verdict.model_validate_json(captured.out)
    assert verdict.verified and "compiles for sm_90 (static)" in verdict.checks_passed
    (facts,) = verdict.kernels
    assert facts.target == "sm_90 (static compile)" and facts.registers and facts.registers > 0
    assert "✓ compiles for sm_90 (static)" in captured.err
    assert f"kernel _softmax_fwd_kernel: registers {facts.registers}" in captured.err
