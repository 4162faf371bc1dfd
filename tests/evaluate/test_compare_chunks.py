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
