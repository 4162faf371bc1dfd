"""Indices of an unstable sort or a topk (issue 28): torch orders tied values by its implementation, so such
indices are judged by the values they select, each index once (correctness.compare_selection); a stable sort's
indices, and any other integer output, stay exact."""

from __future__ import annotations

import torch
from foundry.core.records import FailureKind
from foundry.evaluate.correctness import Selection, compare_selection
from foundry.evaluate.evaluator import ReferenceOps, unstable_selection


def judged(out: torch.Tensor, ref: torch.Tensor, source: torch.Tensor, dim: int = -1):
    return compare_selection(out, ref, Selection(source, dim, "sort"), kind=FailureKind.MISMATCH, what="output 1")


def test_another_order_of_tied_values_is_right():
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    ref = torch.tensor([[4, 1, 2, 0, 3], [3, 0, 4, 1, 2]])
    out = torch.tensor([[1, 2, 4, 0, 3], [0, 1, 2, 3, 4]])
    assert judged(out, ref, x) is None
    assert judged(ref.clone(), ref, x) is None


def test_nan_ties_and_signed_zeros_are_ties():
    x = torch.tensor([[float("nan"), 0.0, float("nan"), -0.0]])
    ref = torch.tensor([[2, 0, 3, 1]])
    assert judged(torch.tensor([[0, 2, 1, 3]]), ref, x) is None


def test_indices_selecting_other_values_are_wrong():
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0, 2.0]])
    ref = torch.tensor([[1, 2, 4, 0, 3]])
    diagnosis = judged(torch.tensor([[1, 4, 2, 0, 3]]), ref, x)
    assert diagnosis is not None and diagnosis.rule == "exact"
    assert "select other values at 2 places" in diagnosis.message


def test_an_index_twice_or_out_of_range_is_wrong():
    x = torch.tensor([[3.0, 3.0, 1.0]])
    ref = torch.tensor([[0, 1, 2]])
    twice = judged(torch.tensor([[0, 0, 2]]), ref, x)  # selects the same values, but one element twice
    assert twice is not None and "chosen twice" in twice.message
    assert judged(torch.tensor([[1, 0, 5]]), ref, x) is not None
    assert judged(torch.tensor([[1, 0, -1]]), ref, x) is not None


def test_topk_along_a_middle_dim():
    x = torch.tensor([[[1.0, 5.0], [5.0, 5.0], [5.0, 0.0]]])  # (1, 3, 2): top-2 along dim 1
    ref = torch.tensor([[[1, 0], [2, 1]]])
    assert judged(torch.tensor([[[2, 1], [1, 0]]]), ref, x, dim=1) is None
    assert judged(torch.tensor([[[0, 1], [1, 0]]]), ref, x, dim=1) is not None  # 1.0 is not a top-2 value of column 0


def test_which_ops_count_as_unstable():
    x = torch.randn(4, 20)
    recorder = ReferenceOps(selections=True)
    with recorder:
        _, top = torch.topk(x * 2, 3, dim=0)
        order = torch.argsort(x, dim=-1, descending=True)
        torch.sort(x, stable=True)
        torch.topk(x, 3, sorted=False)
    chosen = {id(t): s for t, s in recorder.selections}
    assert len(recorder.selections) == 2 and chosen[id(top)].dim == 0 and chosen[id(order)].dim == -1
    assert chosen[id(top)].op == "topk" and torch.equal(chosen[id(top)].source, x * 2)
    assert unstable_selection(torch.ops.aten.sort.stable, (x,), {"stable": True}) is None
    assert unstable_selection(torch.ops.aten.sort.stable, (x,), {"stable": False, "dim": 0}).dim == 0
    assert unstable_selection(torch.ops.aten.add.Tensor, (x, x), {}) is None
