"""Convolution-family candidates through the real evaluator (isolated worker, several checks, shape variants)
under the Triton interpreter: a representative set of templates and genes, and the hybrid policy's
library-convolution candidate (verified under hybrid, rejected by the runtime guard under strict)."""

from __future__ import annotations

from pathlib import Path

import pytest
from codegen_helpers import EXAMPLES, evaluate, explain, request_for
from foundry.core.records import Candidate, FailureKind
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

pytestmark = [pytest.mark.interp]

CASES = [
    ("conv2d-gemm-tf32x3", "conv_2d_bias_relu.py", {"conv.algo": "gemm", "conv.precision": "tf32x3"}),
    ("depthwise-direct", "conv_depthwise_2d_hardswish.py", {"conv.algo": "direct", "conv.BLOCK_M": 32}),
    ("depthwise-plane", "conv_depthwise_2d_hardswish.py", {"conv.algo": "plane", "conv.BLOCK_N": 16}),
    ("transpose3d-gemm-tap", "conv_transpose3d_sigmoid.py", {"conv.algo": "gemm", "conv.k_order": "tap"}),
    ("grouped-strided-unfused", "conv_grouped_strided_silu.py", {"plan.fuse_epilogue": False}),
    ("transpose2d-gemm", "conv_transpose2d_gelu.py", {"conv.algo": "gemm", "conv.BLOCK_N": 32}),
    ("transpose3d-direct", "conv_transpose3d_sigmoid.py", {"conv.algo": "direct"}),
    ("conv-groupnorm", "conv_2d_groupnorm_relu.py", {}),
    ("conv1d-avgpool", "conv_1d_avgpool_relu.py", {"pool.BLOCK_SIZE": 128}),
]


@pytest.mark.parametrize(("name", "example", "genes"), CASES, ids=[c[0] for c in CASES])
def test_template_is_verified_by_the_evaluator(writer: TemplateWriter, name: str, example: str, genes: dict):
    path = EXAMPLES / example
    source = writer.render(request_for(path).spec, genes)
    verdict = evaluate(path, source, name)
    assert verdict.verified, explain(verdict)
    assert verdict.triton_launches >= 1


def hybrid_verdict(path: Path, source: str, policy: str):
    evaluator = CandidateEvaluator(load_operator(str(path)), policy=policy, config=EvaluatorConfig(trials=1))
    return evaluator.evaluate(Candidate(id=f"hybrid-{policy}", source=source, writer="template"))


def test_hybrid_library_candidate_is_proposed_reported_and_verified():
    path = EXAMPLES / "conv_pointwise_1x1_residual.py"
    hybrid = TemplateWriter(policy="hybrid")
    candidates = hybrid.propose(request_for(path, count=3))
    library = [c for c in candidates if c.genes.get("conv.library")]
    assert library, [c.notes for c in candidates]
    assert "library" in library[0].notes and "Triton" in library[0].notes
    assert "torch.convolution(" in library[0].source
    verdict = hybrid_verdict(path, library[0].source, "hybrid")
    assert verdict.verified, explain(verdict)
    assert verdict.triton_launches >= 1
    strict = hybrid_verdict(path, library[0].source, "strict")
    assert not strict.verified
    assert strict.failure is not None and strict.failure.kind == FailureKind.RUNTIME_GUARD
    assert "convolution" in strict.failure.message


def test_strict_writer_never_proposes_the_library_convolution(writer: TemplateWriter):
    candidates = writer.propose(request_for(EXAMPLES / "conv_2d_bias_relu.py", count=6, seed=3))
    assert candidates
    for c in candidates:
        assert "conv.library" not in c.genes
        assert "torch.convolution" not in c.source
