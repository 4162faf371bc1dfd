"""Convolution-family kernels compiled for the GPU target (sm_90, Triton's own compiler on this CPU) by the
evaluator's static-compile stage at their default genes and the tensor-core scheme: they build, fit
shared memory and do not spill."""

from __future__ import annotations

import pytest
from codegen_helpers import EXAMPLES, explain, request_for
from foundry.core.records import Candidate
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

pytestmark = [pytest.mark.interp, pytest.mark.slow]

CASES = [
    ("conv2d-gemm-ieee", "conv_2d_bias_relu.py", {"conv.algo": "gemm"}),
    ("conv2d-gemm-tf32x3", "conv_2d_bias_relu.py", {"conv.algo": "gemm", "conv.precision": "tf32x3"}),
    ("transpose3d-auto", "conv_transpose3d_sigmoid.py", {}),
    ("direct-then-pool", "conv_2d_relu_maxpool.py", {"conv.algo": "direct"}),
]


@pytest.mark.parametrize(("name", "example", "genes"), CASES, ids=[c[0] for c in CASES])
def test_conv_kernels_compile_for_sm90_without_spills(writer: TemplateWriter, name: str, example: str, genes: dict):
    path = EXAMPLES / example
    source = writer.render(request_for(path).spec, genes)
    evaluator = CandidateEvaluator(load_operator(str(path)), config=EvaluatorConfig(trials=1, static_compile=True))
    verdict = evaluator.evaluate(Candidate(id=name, source=source, writer="template"))
    assert verdict.verified, explain(verdict)
    assert verdict.kernels, "no compiled kernel facts"
    for facts in verdict.kernels:
        assert facts.spills == 0, facts
        assert (facts.shared_bytes or 0) <= 227 * 1024, facts
