"""Large outputs are compared a chunk at a time first (correctness.CHUNK): the verdicts must be those of
the whole-tensor comparison, for passing outputs, each kind of failure, and the relative-RMS check."""

from __future__ import annotations

import pytest
import torch
from foundry.core.records import FailureKind
from foundry.evaluate import correctness
from foundry.evaluate.correctness import Tolerance, compare

TOL = Tolerance(atol=1e-5, rtol=1e-3)


def outputs() -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    ref = torch.randn(37, 53, generator=g)
    ref[3, 4] = float("inf")
    ref[5, 6] = float("nan")
    close = ref + 1e-7 * torch.randn(ref.shape, generator=g)
    close[3, 4], close[5, 6] = float("inf"), float("nan")
    off = close.clone()
    off[30, 50] += 1.0  # one element outside tolerance, in the last chunk
    poisoned = close.clone()
    poisoned[36, 52] = float("nan")
    small = torch.rand(37, 53, generator=g) * 1e-5  # every element within atol, but digits lost
    return {
        "within": (close, ref),
        "one off": (off, ref),
        "poisoned": (poisoned, ref),
        "coarse": ((small * 2e5).round() / 2e5, small),
        "strided": (close.t().contiguous().t(), ref),
    }


@pytest.mark.parametrize("name", list(outputs()))
def test_chunked_and_whole_comparisons_agree(name, monkeypatch):
    out, ref = outputs()[name]
    whole = compare(out, ref, TOL, kind=FailureKind.MISMATCH, what="x")
    monkeypatch.setattr(correctness, "CHUNK", 100)  # 1961 elements: 20 chunks, the last one partial
    chunked = compare(out, ref, TOL, kind=FailureKind.MISMATCH, what="x")
    assert (whole is None) == (chunked is None)
    if whole is not None:
        assert chunked is not None
        assert (chunked.kind, chunked.rule) == (whole.kind, whole.rule)
        assert chunked.message == whole.message or chunked.rule == "relative_rms"
    expected = {"within": None, "one off": "tolerance", "poisoned": "coverage", "coarse": "relative_rms"}
    assert (whole.rule if whole else None) == expected.get(name)


def test_an_infinity_of_the_wrong_sign_is_a_mismatch():
    ref = torch.tensor([1.0, float("inf"), float("-inf"), 2.0])
    tol = Tolerance(atol=1e-4, rtol=1e-4)
    assert compare(ref.clone(), ref, tol, kind=FailureKind.MISMATCH, what="out") is None
    flipped = torch.tensor([1.0, float("-inf"), float("-inf"), 2.0])
    diag = compare(flipped, ref, tol, kind=FailureKind.MISMATCH, what="out")
    assert diag is not None and "got -inf, expected inf" in diag.message


def test_a_complex_output_is_judged_on_both_parts():
    ref = torch.complex(torch.randn(4, 6), torch.randn(4, 6))
    tol = Tolerance(atol=1e-4, rtol=1e-4)
    assert compare(ref.clone(), ref, tol, kind=FailureKind.MISMATCH, what="out") is None
    real_only = torch.complex(ref.real, torch.zeros_like(ref.imag))  # the imaginary half never written
    assert compare(real_only, ref, tol, kind=FailureKind.MISMATCH, what="out") is not None
    slack = torch.full(ref.shape, 1e-2)
    nudged = ref + 1e-3j
    assert compare(nudged, ref, tol, kind=FailureKind.MISMATCH, what="out") is not None
    with_slack = Tolerance(atol=1e-4, rtol=1e-4, slack=slack.to(ref.dtype))
    assert compare(nudged, ref, with_slack, kind=FailureKind.MISMATCH, what="out") is None
