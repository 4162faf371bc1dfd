"""Operator settings given from outside the operator file (`.github/foundry.yml` per operator, or `optimize` and
`check` on the command line): precision class, training, and input shapes and dtype standing in for get_inputs()."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from foundry.action import PlannedOperator, settings_argv
from foundry.cli import build_parser, main
from foundry.commands.operator_args import load_from_args
from foundry.github.config import parse_config
from foundry.spec.loader import SpecError, load_operator

NO_INPUTS = (  # a layer of a model file: no get_inputs(), named in the config with its shapes
    "import torch\nfrom torch import nn\n\n\n"
    "class Gelu(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return torch.nn.functional.gelu(x)\n"
)
DECLARED = (
    "import torch\nfrom torch import nn\n\nFOUNDRY_PRECISION = 'fp32'\n\n\n"
    "class Model(nn.Module):\n"
    "    def forward(self, x):\n"
    "        return x * 2\n\n\n"
    "def get_inputs():\n    return [torch.randn(4, 8), 3]\n\n\n"
    "def get_init_inputs():\n    return []\n"
)


def test_configured_shapes_and_dtype_stand_in_for_get_inputs(tmp_path: Path):
    path = tmp_path / "layers.py"
    path.write_text(NO_INPUTS)
    with pytest.raises(SpecError, match="no get_inputs"):
        load_operator(f"{path}::Gelu")
    loaded = load_operator(f"{path}::Gelu", input_shapes=((2, 3, 5),), input_dtype="float16")
    inputs = loaded.inputs(small=True)
    assert [tuple(x.shape) for x in inputs] == [(2, 3, 5)] and inputs[0].dtype == torch.float16
    assert loaded.variants(small=True) == [] and loaded.spec.input_shapes == ((2, 3, 5),)
    with pytest.raises(SpecError, match="dtype 'int8'"):
        load_operator(f"{path}::Gelu", input_shapes=((2,),), input_dtype="int8")


def test_a_configured_dtype_casts_the_declared_floating_inputs_only(tmp_path: Path):
    path = tmp_path / "double.py"
    path.write_text(DECLARED)
    loaded = load_operator(str(path), input_dtype="bfloat16", precision="bf16", training=True)
    x, n = loaded.inputs()
    assert x.dtype == torch.bfloat16 and n == 3
    assert loaded.spec.precision == "bf16" and loaded.spec.training


def test_the_action_passes_configured_settings_as_optimize_reads_them(tmp_path: Path):
    config = parse_config(
        "defaults: {precision: tf32}\n"
        "operators:\n"
        "  lib/layers.py::Gelu: {inputs: [[2, 3, 5]], dtype: float16, training: true}\n"
    )
    settings = config.settings_for("lib/layers.py::Gelu")
    op = PlannedOperator(
        ref="lib/layers.py::Gelu",
        slug="gelu",
        status="added",
        precision=settings.precision,
        training=settings.training,
        dtype=settings.dtype,
        inputs=settings.inputs,
    )
    argv = settings_argv(op)
    args = build_parser().parse_args(["optimize", "lib/layers.py::Gelu", *argv])
    assert (args.precision, args.training, args.dtype) == ("tf32", True, "float16")
    assert args.inputs is not None and "[[2, 3, 5]]" in args.inputs
    path = tmp_path / "layers.py"
    path.write_text(NO_INPUTS)
    args.operator = f"{path}::Gelu"
    loaded = load_from_args(args)
    assert loaded.spec.training and loaded.spec.precision == "tf32" and loaded.spec.input_shapes == ((2, 3, 5),)
    assert settings_argv(PlannedOperator(ref="x.py", slug="x", status="added")) == []  # the file's own stand


def test_training_off_in_the_config_is_passed_as_such():
    config = parse_config("operators: {ops/a.py: {training: false}}")
    op = PlannedOperator(ref="ops/a.py", slug="a", status="added", training=config.settings_for("ops/a.py").training)
    assert settings_argv(op) == ["--no-training"]
    with pytest.raises(Exception, match="training"):
        parse_config("operators: {ops/a.py: {training: 'yes'}}")


@pytest.mark.parametrize("text", ["[[2, 0]]", "[2, 3]", "not json", "[]"])
def test_bad_input_shapes_on_the_command_line_exit_2(tmp_path: Path, text: str, capsys):
    path = tmp_path / "layers.py"
    path.write_text(NO_INPUTS)
    candidate = tmp_path / "cand.py"
    candidate.write_text("x = 1\n")
    assert main(["check", f"{path}::Gelu", str(candidate), "--inputs", text]) == 2
    assert "--inputs" in capsys.readouterr().err
