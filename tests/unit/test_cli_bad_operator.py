"""An operator that does not run is bad input: `foundry optimize` and `foundry check` exit 2 at once with a
message naming the operator and its error, with or without the experience library, before any candidate
is written or evaluated (never exit 3 "internal error", never a writer's or candidate's failure)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from foundry.cli import main

HEADER = "import torch\nfrom torch import nn\n\n\n"
FORWARD_RAISES = HEADER + (
    "class Model(nn.Module):\n"
    "    def forward(self, x):\n"
    "        raise ValueError('the forward is broken')\n\n\n"
    "def get_inputs():\n    return [torch.randn(4, 8)]\n\n\n"
    "def get_init_inputs():\n    return []\n"
)
CPU_FORWARD_RAISES = HEADER + (  # runs at full size, fails at the CPU shapes the search uses here
    "class Model(nn.Module):\n"
    "    def forward(self, x):\n"
    "        assert x.shape[0] == 4, 'the forward is broken'\n"
    "        return x * 2\n\n\n"
    "def get_inputs():\n    return [torch.randn(4, 8)]\n\n\n"
    "def get_cpu_inputs():\n    return [torch.randn(2, 8)]\n\n\n"
    "def get_init_inputs():\n    return []\n"
)
CONSTRUCTOR_RAISES = HEADER + (
    "class Model(nn.Module):\n"
    "    def __init__(self, n):\n"
    "        super().__init__()\n"
    "        raise RuntimeError('the constructor is broken')\n\n"
    "    def forward(self, x):\n        return x\n\n\n"
    "def get_inputs():\n    return [torch.randn(4, 8)]\n\n\n"
    "def get_init_inputs():\n    return [3]\n"
)
INPUTS_RAISE = HEADER + (
    "class Model(nn.Module):\n    def forward(self, x):\n        return x\n\n\n"
    "def get_inputs():\n    raise KeyError('the inputs are broken')\n\n\n"
    "def get_init_inputs():\n    return []\n"
)
OPERATORS = {
    "forward": (FORWARD_RAISES, "forward(*get_inputs()) raised ValueError: the forward is broken"),
    "cpu_forward": (CPU_FORWARD_RAISES, "forward(*get_cpu_inputs()) raised AssertionError: the forward is broken"),
    "constructor": (CONSTRUCTOR_RAISES, "Model(*get_init_inputs()) raised RuntimeError: the constructor is broken"),
    "inputs": (INPUTS_RAISE, "get_inputs() raised KeyError: 'the inputs are broken'"),
}
COMMANDS = {
    "optimize": ["--budget", "1", "--islands", "1"],
    "optimize --no-experience": ["--budget", "1", "--islands", "1", "--no-experience"],
}


@pytest.mark.parametrize("broken", sorted(OPERATORS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_optimize_exits_2_naming_the_operator_and_its_error(
    broken: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if broken == "cpu_forward" and torch.cuda.is_available():
        pytest.skip("the CPU shapes are used only without a GPU")
    source, error = OPERATORS[broken]
    operator = tmp_path / f"broken_{broken}.py"
    operator.write_text(source)
    out = tmp_path / "out"
    code = main(["optimize", str(operator), "--out", str(out), *COMMANDS[command]])
    err = capsys.readouterr().err
    assert code == 2, err
    message = [line for line in err.splitlines() if line.startswith("foundry: error:")]
    assert len(message) == 1 and str(operator) in message[0] and error in message[0], err
    assert "internal error" not in err and "writer" not in err and "Traceback" not in err
    assert not out.exists()  # stopped before the search: no report of candidates that never ran


@pytest.mark.parametrize("broken", sorted(OPERATORS))
def test_check_exits_2_naming_the_operator_and_its_error(
    broken: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if broken == "cpu_forward" and torch.cuda.is_available():
        pytest.skip("the CPU shapes are used only without a GPU")
    source, error = OPERATORS[broken]
    operator = tmp_path / f"broken_{broken}.py"
    operator.write_text(source)
    candidate = tmp_path / "candidate.py"
    candidate.write_text("from torch import nn\n\n\nclass ModelNew(nn.Module):\n    pass\n")
    code = main(["check", str(operator), str(candidate)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"foundry: error: {operator}" in err and error in err, err
    assert "REJECTED" not in err and "internal error" not in err


@pytest.mark.skipif(torch.cuda.is_available(), reason="--allow-cpu is the CPU path")
def test_bench_of_a_given_kernel_exits_2_naming_the_operator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source, error = OPERATORS["forward"]
    operator = tmp_path / "broken_forward.py"
    operator.write_text(source)
    kernel = tmp_path / "kernel.py"
    kernel.write_text("from torch import nn\n\n\nclass ModelNew(nn.Module):\n    pass\n")
    code = main(["bench", f"{operator}={kernel}", "--allow-cpu"])
    err = capsys.readouterr().err
    assert code == 2 and f"foundry: error: {operator}" in err and error in err, err
