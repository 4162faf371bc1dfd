"""Every example operator gets a template kernel the evaluator verifies under the Triton interpreter
(strict policy: all arithmetic in Triton, several trials, the declared shape variants)."""

from __future__ import annotations

from pathlib import Path

import pytest
from codegen_helpers import EXAMPLES, evaluate, explain, request_for

pytestmark = [pytest.mark.interp, pytest.mark.slow]

OPERATORS = sorted(EXAMPLES.glob("*.py"))
# Examples whose default kernel is also compiled for sm_90 (test_sm90's claim: it builds, fits shared memory, does
# not spill): one evaluation here, with the static compile on, instead of one here and the same one there.
SM90 = {"softmax", "cross_entropy", "mean_dim1", "conv_pool3d_max_plus_avg"}


def test_there_are_at_least_sixteen_examples():
    assert len(OPERATORS) >= 16
    names = {p.stem for p in OPERATORS}
    assert {"softmax", "layernorm", "rmsnorm", "batched_matmul", "linear_bias_relu"} <= names


@pytest.mark.parametrize("path", OPERATORS, ids=lambda p: p.stem)
def test_default_candidate_is_verified(writer, path: Path):
    [candidate] = writer.propose(request_for(path))
    assert "class ModelNew(nn.Module)" in candidate.source
    assert "_fwd_kernel" in candidate.source or "_partial_kernel" in candidate.source
    verdict = evaluate(path, candidate.source, candidate.id, static_compile=path.stem in SM90)
    assert verdict.verified, explain(verdict)
    assert verdict.triton_launches >= 1
    if path.stem in SM90:
        assert verdict.kernels, "no compiled kernel facts"
        for facts in verdict.kernels:
            assert facts.spills == 0, facts
            assert (facts.shared_bytes or 0) <= 227 * 1024, facts
