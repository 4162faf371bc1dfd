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
    # aten.convolution, or aten.conv2d where the first call that meets it runs under inference_mode (whole there)
    assert verdict.failure.rule == "non_triton_compute" and "aten.conv" in verdict.failure.message


# -- what hybrid grants: the eligible library ops the operator's own reference runs, and its declared ones --

MATMUL = """
import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(6, 5))

    def forward(self, x):
        return x @ self.weight


def get_inputs():
    return [torch.randn(4, 6)]


def get_init_inputs():
    return []
"""

MATMUL_BY_CONVOLUTION = """
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(6, 5))

    def forward(self, x):
        kernel = self.weight.t().unsqueeze(-1)
        z = torch.nn.functional.conv1d(x.t().unsqueeze(0), kernel).squeeze(0).t().contiguous()
        y = torch.empty_like(z)
        _copy_kernel[(triton.cdiv(z.numel(), 256),)](z, y, z.numel(), BLOCK=256)
        return y
"""


def hybrid(tmp_path, source: str) -> CandidateEvaluator:
    path = tmp_path / "op.py"
    path.write_text(source)
    return CandidateEvaluator(load_operator(str(path)), policy="hybrid", config=EvaluatorConfig(trials=1), device="cpu")


def test_hybrid_grants_convolution_only_where_the_reference_runs_one(tmp_path, operator):
    conv = CandidateEvaluator(operator, policy="hybrid", config=EvaluatorConfig(trials=1), device="cpu")
    matmul = hybrid(tmp_path, MATMUL)
    for evaluator in (conv, matmul):
        assert "convolution" not in evaluator.allowed_ops  # nothing granted before the reference has run
        evaluator.prepare().close()
    # granted by configuration: the reference's weight shape and groups (convolution[out x in x kh x kw/groups])
    assert {name.partition("[")[0] for name in conv.library_ops} == {"convolution"}
    assert all(name.startswith("convolution[") for name in conv.library_ops)
    assert any(name.startswith("convolution[") for name in conv.reference_ops)
    assert matmul.library_ops == frozenset() and not any(n.startswith("convolution") for n in matmul.allowed_ops)
    assert matmul.reference_ops and not any(n.startswith("convolution") for n in matmul.reference_ops)


def test_an_operators_declared_library_op_is_granted(tmp_path):
    evaluator = hybrid(tmp_path, MATMUL + '\nFOUNDRY_HYBRID_OPS = ["mm"]\n')
    evaluator.prepare().close()
    assert evaluator.library_ops == frozenset({"mm"})


def test_a_matmul_by_library_convolution_is_rejected_under_hybrid(tmp_path):
    with hybrid(tmp_path, MATMUL) as evaluator:
        verdict = evaluator.evaluate(Candidate(id="mm-by-conv", source=MATMUL_BY_CONVOLUTION))
    assert not verdict.verified
    assert verdict.failure.kind is FailureKind.RUNTIME_GUARD
    # aten.convolution, or aten.conv1d where the first call that meets it runs under inference_mode (whole there)
    assert verdict.failure.rule == "non_triton_compute" and "aten.conv" in verdict.failure.message
