"""Kernels compiled for sm_90 on this CPU: facts for the cost model, and GPU-only failures caught early."""

from pathlib import Path

import pytest
from foundry.core.records import Candidate, FailureKind, Stage
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

CHEATS = Path(__file__).resolve().parents[1] / "cheats"
pytestmark = [pytest.mark.interp, pytest.mark.slow]

HUGE_TILES = """
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        m, k = a.shape
        n = b.shape[1]
        c = torch.empty((m, n), device=a.device, dtype=a.dtype)
        grid = (triton.cdiv(m, 128), triton.cdiv(n, 128))
        _matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                             BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_stages=5)
        return c
"""


def make_evaluator(path: Path) -> CandidateEvaluator:
    return CandidateEvaluator(load_operator(str(path)), config=EvaluatorConfig(trials=1, static_compile=True))


@pytest.fixture(scope="module")
def evaluator() -> CandidateEvaluator:
    return make_evaluator(CHEATS / "operators" / "softmax_rows.py")


def test_honest_kernel_gets_sm90_facts(evaluator: CandidateEvaluator):
    verdict = evaluator.evaluate(Candidate(id="honest", source=(CHEATS / "honest" / "softmax.py").read_text()))
    assert verdict.verified, verdict.diagnoses
    (facts,) = verdict.kernels
    assert facts.name == "_softmax_fwd_kernel"
    assert facts.target == "sm_90 (static compile)"
    assert facts.registers and facts.registers > 0
    assert facts.spills == 0
    assert "compiles for sm_90 (static)" in verdict.checks_passed


def test_tiles_over_the_shared_memory_limit_are_diagnosed_without_a_gpu():
    # Correct under the interpreter, but 5 stages of 128x64 + 64x128 fp32 tiles cannot fit sm_90.
    evaluator = make_evaluator(Path(__file__).parent / "operators" / "matmul_small.py")
    verdict = evaluator.evaluate(Candidate(id="huge", source=HUGE_TILES))
    assert not verdict.verified
    failure = verdict.failure
    assert failure is not None
    assert failure.stage == Stage.COMPILE
    assert failure.kind in (FailureKind.RESOURCE_LIMIT, FailureKind.COMPILE_ERROR)
    assert "_matmul_kernel" in failure.message
