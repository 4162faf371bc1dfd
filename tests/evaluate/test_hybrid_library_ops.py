"""Hybrid policy: library work a candidate keeps (a cuDNN/ATen convolution before a Triton epilogue) is
allowed, and reported in the verdict; strict rejects the same candidate."""

from __future__ import annotations

import pytest
from foundry.core.records import Candidate, FailureKind
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

pytestmark = pytest.mark.interp

OPERATOR = """
import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(2, 3, 5, 6)]


def get_init_inputs():
    return []
"""

CANDIDATE = """
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        z = torch.nn.functional.conv2d(x, self.conv.weight, self.conv.bias, padding=1).contiguous()
        y = torch.empty_like(z)
        _relu_kernel[(triton.cdiv(z.numel(), 256),)](z, y, z.numel(), BLOCK=256)
        return y
"""


@pytest.fixture(scope="module")
def operator(tmp_path_factory):
    path = tmp_path_factory.mktemp("hybrid") / "conv_relu.py"
    path.write_text(OPERATOR)
    return load_operator(str(path))


def evaluate(operator, policy: str):
    with CandidateEvaluator(operator, policy=policy, config=EvaluatorConfig(trials=1), device="cpu") as evaluator:
        return evaluator.evaluate(Candidate(id=f"conv-lib-{policy}", source=CANDIDATE))


def test_hybrid_reports_the_library_convolution(operator):
    verdict = evaluate(operator, "hybrid")
    assert verdict.verified, verdict.failure and verdict.failure.headline()
    assert verdict.library_ops == ("convolution",)


def test_strict_rejects_it_naming_the_op(operator):
    verdict = evaluate(operator, "strict")
    assert not verdict.verified
    assert verdict.failure.kind is FailureKind.RUNTIME_GUARD
    assert verdict.failure.rule == "non_triton_compute" and "aten.convolution" in verdict.failure.message
