"""The breadth suite's product bugs (benchmarks/breadth/2026-12-05/NOTES.md), each fixed: the template candidate of
its reproducer (kept here, out of examples/breadth/_bugs/) renders at its default genes and the real evaluator
verifies it. The first verification only (one trial), as the product's first round."""

from __future__ import annotations

from pathlib import Path

import pytest
from codegen_helpers import evaluate, explain
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

pytestmark = [pytest.mark.interp, pytest.mark.slow]

HEADER = """
import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"
"""

# a slice (a view) in front of an elementwise op: the causal conv1d's "keep the first L steps" of Mamba
SLICE_THEN_SILU = """
class Model(nn.Module):
    def forward(self, x):
        return F.silu(x[..., : x.shape[-1] - 3])


def get_inputs():
    return [torch.randn(8, 1536, 2051)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 4, 12)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 4, 5)]]
"""

# the same class of views: chunk (split.Tensor), select, slices from the end
CHUNK_SELECT = """
class Model(nn.Module):
    def forward(self, x):
        gate, value = x.chunk(2, dim=-1)
        return F.silu(gate) * value + x[:, :1, -1:] - x[:, 0, None, 1:2]


def get_inputs():
    return [torch.randn(8, 64, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 3, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 4, 6)]]
"""

# a float constant computed from an input size: the 1/sqrt(d) of attention
SCALE_BY_HEAD_DIM = """
class Model(nn.Module):
    def forward(self, x):
        return x * x.shape[-1] ** -0.5


def get_inputs():
    return [torch.randn(4, 16, 1024, 64)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1, 3, 4)]]
"""

# einsum attention scores: torch's lowering folds b * h into one batch dim and permutes size-1 dims apart
EINSUM_4D_SCORES = """
class Model(nn.Module):
    def forward(self, q, k):
        return torch.einsum("bhqd,bhkd->bhqk", q, k)


def get_inputs():
    return [torch.randn(4, 16, 512, 64), torch.randn(4, 16, 512, 64)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 3, 4), torch.randn(2, 3, 3, 4)]]
"""

# GroupNorm (affine) then a spatial mean: the mean's row-loop kernel read the norm's weight and bias
GROUPNORM_THEN_MEAN = """
class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.norm(x).mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(64, 64, 62, 62)]


def get_init_inputs():
    return [8, 64]


def get_cpu_inputs():
    return [torch.randn(2, 6, 4, 5)]


def get_cpu_init_inputs():
    return [2, 6]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6, 3, 3)]]
"""


# a three-operand einsum keeps torch's own lowering (it raised a RuntimeError in the capture)
BILINEAR_EINSUM = """
class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in, d_in))

    def forward(self, x1, x2):
        return torch.einsum("bi,oij,bj->bo", x1, self.weight, x2)


def get_inputs():
    return [torch.randn(64, 32), torch.randn(64, 32)]


def get_init_inputs():
    return [32, 16]


def get_cpu_inputs():
    return [torch.randn(3, 4), torch.randn(3, 4)]


def get_cpu_init_inputs():
    return [4, 5]
"""

# tensors of one value (ones, zeros, full and their _like / new_ forms) in elementwise arithmetic are constants
FILLED = """
class Model(nn.Module):
    def forward(self, x):
        scale = torch.full((x.shape[-1],), 2.0, device=x.device)
        return x * scale + torch.ones_like(x) - x.new_zeros(1, x.shape[-1])


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 5)]]
"""

CASES = {
    "slice_then_silu": (SLICE_THEN_SILU, "[:, :, :-3]"),
    "chunk_select": (CHUNK_SELECT, ".chunk(2, 2)[0]"),
    "filled": (FILLED, "def forward(self, x)"),
    "scale_by_head_dim": (SCALE_BY_HEAD_DIM, "x.shape[3] ** -0.5"),
    "einsum_4d_scores": (EINSUM_4D_SCORES, "mm.reshape(q.shape[0], q.shape[1]"),
    "bilinear_einsum": (BILINEAR_EINSUM, "def forward(self, x1, x2)"),
    "groupnorm_then_mean": (GROUPNORM_THEN_MEAN, "_groupnorm_then_mean_row1_loop_fwd_kernel"),
}
# genes that run the looped kernels at the CPU sizes, where a case's bug was
GENES = {"groupnorm_then_mean": {"row.max_single_n": 0}}


@pytest.mark.parametrize("name", list(CASES))
def test_reproducer_is_verified(name: str, tmp_path: Path) -> None:
    body, expected = CASES[name]
    path = tmp_path / f"{name}.py"
    path.write_text(HEADER + body)
    op = load_operator(str(path))
    source = TemplateWriter(loader=lambda ref: op).render(op.spec, GENES.get(name, {}))
    assert expected in source  # the host code says what the reference computes, with its sizes
    verdict = evaluate(path, source)
    assert verdict.verified, explain(verdict)
