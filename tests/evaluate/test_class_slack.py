"""Under a precision class coarser than its outputs' dtype (tf32, fp16, bf16), every trial's elements may differ by
the class's rounding of the terms they sum (evaluator.CLASS_SLACK_ULPS): a TF32 dot over 512 terms moves a
near-zero result by about 1e-2, far past atol + rtol * |ref|, and is honest."""

from pathlib import Path

import pytest
import torch
from foundry.core.records import Candidate
from foundry.evaluate import interp_autotune
from foundry.evaluate.correctness import Tolerance
from foundry.evaluate.evaluator import CLASS_SLACK_ULPS, PRECISION_EPS, CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

OPERATOR = '''
import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(256, 512), torch.randn(512, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return cancelling()


def cancelling():
    """Row 0 of a @ b sums 512 terms to zero (b's last row chosen for it): results far smaller than their terms."""
    a, b = torch.randn(16, 512), torch.randn(512, 16)
    a[0, -1] = 1.0
    b[-1] = -(a[0, :-1] @ b[:-1])
    return [a, b]
'''

PLAIN_DOT = '''
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), device=a.device, dtype=torch.float32)
        _mm[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, c, M, N, K, BM=16, BN=16, BK=128)
        return c
'''


def test_a_tf32_dot_over_many_terms_breaks_the_plain_tolerance_and_stays_within_the_class_slack():
    torch.manual_seed(3)
    scope: dict = {}
    exec(OPERATOR, scope)
    a, b = scope["cancelling"]()
    ref = a @ b
    rounded = torch.from_numpy(interp_autotune.tf32(a.numpy())) @ torch.from_numpy(interp_autotune.tf32(b.numpy()))
    err = (rounded.double() - ref.double()).abs()
    tol = Tolerance(atol=5e-3, rtol=5e-3)
    assert bool((err > tol.atol + tol.rtol * ref.abs()).any()), "the premise: atol + rtol alone refuses TF32"
    slack = CLASS_SLACK_ULPS * PRECISION_EPS["tf32"] * (a.abs() @ b.abs())
    assert bool((err <= slack).all())


@pytest.mark.interp
def test_an_honest_tf32_dot_is_verified_on_every_trial(tmp_path: Path):
    op = tmp_path / "mm_tf32.py"
    op.write_text(OPERATOR)
    loaded = load_operator(str(op))
    with CandidateEvaluator(loaded, config=EvaluatorConfig(trials=2), device="cpu") as evaluator:
        verdict = evaluator.evaluate(Candidate(id="plain-tf32-dot", source=PLAIN_DOT, writer="manual"))
    assert verdict.verified, verdict.failure.headline() if verdict.failure else ""
