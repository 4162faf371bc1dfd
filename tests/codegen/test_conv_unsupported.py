"""What the convolution family does not cover yet is an "unsupported" diagnosis naming the aten op and why,
raised while the writer analyses the operator (no candidate is written)."""

from __future__ import annotations

import pytest
from foundry.core.records import FailureKind, Stage
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter, UnsupportedOperator
from test_conv_templates import operator_file

CASES = [
    ("reflect", "nn.Conv2d(3, 4, 3, padding=1, padding_mode='reflect')", 2, "aten.reflection_pad2d", "reflect"),
    ("replicate", "nn.Conv1d(3, 4, 3, padding=1, padding_mode='replicate')", 1, "aten.replication_pad1d", "replicate"),
    ("circular", "nn.Conv2d(3, 4, 3, padding=1, padding_mode='circular')", 2, "aten.new_empty", "circular"),
    ("same-even-kernel", "nn.Conv2d(3, 4, 4, padding='same')", 2, "aten.constant_pad_nd", "padding"),
    ("maxpool-ceil", "nn.MaxPool2d(3, 2, ceil_mode=True)", 2, "aten.max_pool2d_with_indices", "ceil_mode"),
    ("avgpool-ceil", "nn.AvgPool3d(2, ceil_mode=True)", 3, "aten.avg_pool3d", "ceil_mode"),
    ("adaptive-pool", "nn.AdaptiveAvgPool2d(2)", 2, "aten.adaptive_avg_pool2d", "output size"),
    ("affine-instancenorm", "nn.InstanceNorm2d(3, affine=True)", 2, "aten.repeat", "no Triton template"),
    ("float64-conv", "nn.Conv2d(3, 4, 3).double()", 2, "aten.convolution", "dtype"),
]


@pytest.mark.parametrize(("name", "module", "dims", "op", "reason"), CASES, ids=[c[0] for c in CASES])
def test_unsupported_is_named_with_a_reason(tmp_path, name, module, dims, op, reason):
    cast = ".double()" if "double" in module else ""
    shape = (2, 3) + (8,) * dims
    path = operator_file(tmp_path, "", f"self.m = {module}", f"return torch.relu(self.m(x{cast}))", [shape], [])
    writer = TemplateWriter()
    spec = load_operator(str(path)).spec
    with pytest.raises(UnsupportedOperator) as info:
        writer.analysis(spec)
    assert info.value.op.startswith(op), info.value
    assert reason in info.value.reason
    diagnosis = writer.check(spec)
    assert diagnosis is not None
    assert diagnosis.kind == FailureKind.UNSUPPORTED and diagnosis.stage == Stage.WRITER


def test_returned_pool_indices_are_unsupported(tmp_path):
    path = operator_file(
        tmp_path,
        "",
        "self.m = nn.MaxPool2d(2, return_indices=True)",
        "v, i = self.m(x)\nreturn v + i",
        [(2, 3, 6, 6)],
        [],
    )
    with pytest.raises(UnsupportedOperator, match="return_indices"):
        TemplateWriter().analysis(load_operator(str(path)).spec)


def test_conv_attributes_that_follow_constructor_arguments_are_unsupported(tmp_path):
    """A stride taken from a constructor argument that differs between the GPU and CPU sizes: the kernels
    carry stride/padding/dilation as literals, so the analysis refuses rather than guess."""
    path = operator_file(
        tmp_path, "stride", "self.m = nn.Conv2d(3, 4, 3, stride=stride)", "return self.m(x)", [(2, 3, 9, 9)], [2]
    )
    small = (
        "\n\ndef get_cpu_init_inputs():\n    return [1]\n\n\n"
        "def get_cpu_inputs():\n    return [torch.randn(2, 3, 7, 7)]\n"
    )
    path.write_text(path.read_text() + small)
    with pytest.raises(UnsupportedOperator, match="stride"):
        TemplateWriter().analysis(load_operator(str(path)).spec)
