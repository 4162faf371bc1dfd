"""Under a precision class coarser than its outputs' dtype (tf32, fp16, bf16), every trial's elements may differ from
the reference by twice the class reference's distance from it (the reference with its products' operands rounded to
the class: evaluator.class_slack): a TF32 dot over 512 terms moves a near-zero result by about 1e-2, far past
atol + rtol * |ref|, and is honest; bf16 operands under a tf32 class land several times farther."""

from pathlib import Path

import pytest
import torch
from foundry.core.records import Candidate
from foundry.evaluate import interp_autotune
from foundry.evaluate.correctness import Tolerance
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
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

PLAIN_DOT = """
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
"""


def test_a_tf32_dot_breaks_the_plain_tolerance_stays_within_the_class_slack_and_bf16_does_not(tmp_path: Path):
    op = tmp_path / "mm_tf32.py"
    op.write_text(OPERATOR)
    loaded = load_operator(str(op))
    torch.manual_seed(3)
    scope: dict = {}
    exec(OPERATOR, scope)
    a, b = scope["cancelling"]()
    ref = a @ b
    rounded = torch.from_numpy(interp_autotune.tf32(a.numpy())) @ torch.from_numpy(interp_autotune.tf32(b.numpy()))
    coarse = a.bfloat16().float() @ b.bfloat16().float()
    tol = Tolerance(atol=5e-3, rtol=5e-3)
    limit = tol.atol + tol.rtol * ref.abs()
    assert bool(((rounded - ref).abs() > limit).any()), "the premise: atol + rtol alone refuses TF32"
    with CandidateEvaluator(loaded, config=EvaluatorConfig(trials=1), device="cpu") as evaluator:
        (slack,) = evaluator.class_slack(scope["Model"](), [a, b], [ref])
    assert bool(((rounded - ref).abs() <= limit + slack).all())
    assert int(((coarse - ref).abs() > limit + slack).sum()) >= 4  # row 0 cancels: bf16's error shows there


@pytest.mark.interp
def test_an_honest_tf32_dot_is_verified_on_every_trial(tmp_path: Path):
    op = tmp_path / "mm_tf32.py"
    op.write_text(OPERATOR)
    loaded = load_operator(str(op))
    with CandidateEvaluator(loaded, config=EvaluatorConfig(trials=2), device="cpu") as evaluator:
        verdict = evaluator.evaluate(Candidate(id="plain-tf32-dot", source=PLAIN_DOT, writer="manual"))
    assert verdict.verified, verdict.failure.headline() if verdict.failure else ""


def test_the_class_reference_rounds_to_tf32_as_the_interpreter_does():
    """Two roundings to TF32 (the evaluator's on torch tensors, the interpreter's on NumPy arrays) must agree."""
    from foundry.evaluate.evaluator import tf32_rounded

    torch.manual_seed(0)
    x = torch.cat([torch.randn(4096) * 10.0 ** torch.randint(-30, 30, (4096,)), torch.tensor([0.0, -0.0, 3e38, -3e38])])
    x = torch.cat([x, torch.tensor([float("inf"), float("-inf"), float("nan")])])
    ours, theirs = tf32_rounded(x), torch.from_numpy(interp_autotune.tf32(x.numpy()))
    assert torch.equal(ours.view(torch.int32), theirs.view(torch.int32))
