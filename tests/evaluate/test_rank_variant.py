"""A trial at the GPU inputs' rank on the CPU: where get_inputs() and get_cpu_inputs() declare different ranks, the
CPU inputs are reshaped to the full rank (leading dims merged or added) and judged too, so that a kernel specialised
to the CPU inputs' rank fails on the CPU rather than on the GPU."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch
from foundry.core.records import Candidate
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import at_full_rank, load_operator

OPERATOR = """
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return x * self.weight


def get_inputs():
    return [torch.randn({full})]


def get_init_inputs():
    return [16]


def get_cpu_inputs():
    return [torch.randn({small})]


def get_cpu_init_inputs():
    return [16]
"""

CANDIDATE = """
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def scale_kernel(x_ptr, w_ptr, y_ptr, n, C: tl.constexpr):
    offs = tl.program_id(0) * C + tl.arange(0, C)
    y = tl.load(x_ptr + offs) * tl.load(w_ptr + tl.arange(0, C))
    tl.store(y_ptr + offs, y)


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))

    def forward(self, x):
        x = x.contiguous()
        {rows}
        y = torch.empty_like(x)
        scale_kernel[(rows,)](x, self.weight, y, x.numel(), C=x.shape[-1])
        return y
"""


def operator(tmp_path: Path, full: str, small: str):
    path = tmp_path / "scale_op.py"
    path.write_text(OPERATOR.format(full=full, small=small))
    return load_operator(str(path))


def test_cpu_inputs_take_the_full_rank_with_their_own_sizes(tmp_path):
    merged = at_full_rank(operator(tmp_path, "8192, 4096", "2, 3, 16"), [torch.arange(96.0).reshape(2, 3, 16)])
    assert merged is not None and merged[0].shape == (6, 16)
    assert torch.equal(merged[0].flatten(), torch.arange(96.0))  # values kept
    added = at_full_rank(operator(tmp_path, "4, 64, 4096", "6, 16"), [torch.randn(6, 16)])
    assert added is not None and added[0].shape == (2, 6, 16)
    assert not torch.equal(added[0][0], added[0][1])  # each batch its own values (a stride left out shows)
    assert torch.equal(added[0][0].flatten().sort().values, added[0][1].flatten().sort().values)  # moved
    same = at_full_rank(operator(tmp_path, "4, 64, 4096", "6, 16"), [torch.randn(6, 16)], distinct=False)
    assert same is not None and torch.equal(same[0][0], same[0][1])
    assert at_full_rank(operator(tmp_path, "8192, 4096", "6, 16"), [torch.randn(6, 16)]) is None  # same rank


@pytest.mark.interp
@pytest.mark.parametrize(
    ("rows", "verified"),
    [("rows = x.shape[0] * x.shape[1]", False), ("rows = x.numel() // x.shape[-1]", True)],
    ids=["rank_specialised", "any_rank"],
)
def test_a_kernel_specialised_to_the_cpu_rank_fails_on_the_cpu(tmp_path, rows, verified):
    op = operator(tmp_path, "8192, 16", "2, 3, 16")  # 2-d on the GPU, 3-d on the CPU
    source = textwrap.dedent(CANDIDATE).replace("{rows}", rows)
    with CandidateEvaluator(op, config=EvaluatorConfig(trials=1), device="cpu") as evaluator:
        verdict = evaluator.evaluate(Candidate(id="c", source=source, writer="test"))
    assert verdict.verified is verified, verdict.failure
