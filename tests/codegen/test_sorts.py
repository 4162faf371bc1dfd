"""Sorts (issue 28, "breadth: the sort family and cummax"): aten.sort (argsort, stable or not, any dim), aten.topk,
aten.median.dim and aten.cummax / aten.cummin are lowered to sort kernels (codegen/sort.py): one program per block of
rows; sort, topk and median order packed (value, index) int64 keys in a bitonic network, ties lowest index first;
topk walks long rows in tiles; cummax / cummin scan (value, index) pairs with a carry across tiles. Each operator is
rendered under the strict policy and verified by the real evaluator under the interpreter (one trial). The indices of
tied values follow stable=True's order: checked here on the kernels directly. torch's default sort (past 16 elements
a row) and topk order ties their own way: the evaluator judges their indices by the values they select
(tests/evaluate/test_selection.py); under the hybrid policy those stay torch's calls."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import torch
from codegen_helpers import OPERATORS, ROOT, code, evaluate, explain, launched_kinds
from foundry.codegen.analyze import analyze
from foundry.codegen.capture import capture
from foundry.core.records import FailureKind
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter

pytestmark = [pytest.mark.interp]

BREADTH = ROOT / "examples" / "breadth"

# operator path → (genes, the kernels launched, lines the kernel code must hold)
CASES = {
    BREADTH / "sort" / "sort_values.py": ({}, ["sort"], ["ordered = _sort_rows(packed, LOG_N)"]),
    # an unstable argsort and a topk whose indices are outputs: judged by the values they select (tied values
    # come in stable=True's order here, in torch's own elsewhere)
    BREADTH / "sort" / "argsort_descending.py": ({}, ["sort"], ["_sort_keys(scores, lanes, True)"]),
    BREADTH / "sort" / "topk_rows.py": ({}, ["sort"], ["for start in range(0, N, BLOCK_N):"]),
    BREADTH / "sort" / "median_rows.py": ({}, ["sort"], ["best = tl.where(nan_at < N, float('nan'), best)"]),
    BREADTH / "scan" / "cummax_rows.py": ({}, ["sort"], ["tl.associative_scan((x, at), 1, _cummax_combine)"]),
    OPERATORS / "sort_stable_middle.py": ({}, ["sort"], ["INNER = math.prod(shape[2:])", "_sort_keys(x, lanes, True)"]),
    OPERATORS / "sort_fp16_values.py": ({}, ["sort", "pointwise"], ["_sort_keys(x, lanes, False)"]),
    OPERATORS / "sort_topk_smallest.py": (  # rows of 600 in tiles of 256, each tile's best merged with the running
        {"sort.BLOCK_N": 256},
        ["sort"],
        ["for start in range(0, N, BLOCK_N):", "block_n = max(K, min(next_power_of_2(max(N, 1)), 256))"],
    ),
    OPERATORS / "sort_median_keepdim.py": (
        {},
        ["sort", "pointwise"],
        ["values = torch.empty((*shape[:1], 1, *shape[2:])"],
    ),
    OPERATORS / "sort_cummin_bf16.py": ({}, ["sort"], ["take = (b != b) | (a == a) & (b <= a)"]),
}


def writer_for(path: Path, policy: str = "strict") -> tuple[TemplateWriter, object]:
    op = load_operator(str(path))
    return TemplateWriter(loader=lambda ref: op, policy=policy), op


@pytest.mark.parametrize("path", list(CASES), ids=lambda p: p.stem)
def test_sort_verified_under_strict(path: Path) -> None:
    writer, op = writer_for(path)
    assert writer.check(op.spec) is None  # type: ignore[attr-defined]
    genes, kinds, lines = CASES[path]
    source = writer.render(op.spec, genes)  # type: ignore[attr-defined]
    assert launched_kinds(source) == kinds
    assert "torch.sort" not in source and "torch.topk" not in source and ".sort(" not in code(source)
    for line in lines:
        assert line in code(source), (line, code(source))
    verdict = evaluate(path, source, static_compile=True)  # as `foundry optimize` does: the kernel compiles for sm_90
    assert verdict.verified, explain(verdict)


def import_source(path: Path, source: str) -> ModuleType:
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tied(rows: int, n: int) -> torch.Tensor:
    """Values on a grid (many ties, -0.0 beside 0.0), a NaN, infinities."""
    x = torch.round(torch.randn(rows, n) * 2) / 2
    x[0, 3], x[0, 5], x[1, 2], x[1, 7] = float("nan"), float("nan"), float("inf"), float("-inf")
    return x


def test_tied_indices_come_lowest_first(tmp_path: Path) -> None:
    """argsort (descending) and topk on ties, NaN (largest, as torch orders it), infinities and signed zeros: the
    stable order, values and indices, at any row length (rows of 40 and 700: topk in tiles of 256)."""
    torch.manual_seed(0)
    argsort_writer, argsort_op = writer_for(BREADTH / "sort" / "argsort_descending.py")
    argsort = import_source(tmp_path / "argsort.py", argsort_writer.render(argsort_op.spec, {}))  # type: ignore[attr-defined]
    topk_writer, topk_op = writer_for(BREADTH / "sort" / "topk_rows.py")
    topk = import_source(tmp_path / "topk.py", topk_writer.render(topk_op.spec, {"sort.BLOCK_N": 256}))  # type: ignore[attr-defined]
    for n in (40, 700):
        x = tied(3, n)
        expected = torch.sort(x, dim=-1, descending=True, stable=True)
        assert torch.equal(argsort.ModelNew()(x), expected.indices)
        for k in (1, 5, 37):
            values, indices = topk.ModelNew(k)(x)
            assert torch.equal(indices, expected.indices[:, :k])
            assert torch.allclose(values, expected.values[:, :k], equal_nan=True)  # -0.0 reads as 0.0


def test_rows_past_one_tile_are_refused_naming_the_limit() -> None:
    writer, op = writer_for(OPERATORS / "sort_long_rows.py")
    diagnosis = writer.check(op.spec)  # type: ignore[attr-defined]
    assert diagnosis is not None and diagnosis.kind == FailureKind.UNSUPPORTED
    assert diagnosis.message == (
        "aten.sort.default: rows of 16384 elements (a sort holds a row in one tile: at most 8192)"
    ), diagnosis.message


def test_hybrid_keeps_torch_topk_where_its_indices_are_used() -> None:
    """Under the hybrid policy a topk whose indices are returned stays torch's call (its order of tied values is its
    implementation's); strict lowers it, and a values-only topk is lowered under both."""
    op = load_operator(str(BREADTH / "sort" / "moe_router_topk.py"))
    hybrid = analyze(op, lambda model, inputs, names: capture(model, inputs, names, library=frozenset({"topk"})))
    assert hybrid.library_ops() == ["aten.topk.default"]
    strict = analyze(op)
    assert strict.library_ops() == [] and "sort" in [s.kind for s in strict.segments]
    values_only = load_operator(str(OPERATORS / "sort_topk_smallest.py"))
    kept = analyze(values_only, lambda model, inputs, names: capture(model, inputs, names, library=frozenset({"topk"})))
    assert kept.library_ops() == [] and [s.kind for s in kept.segments] == ["sort"]
