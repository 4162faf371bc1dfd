"""Gathers and scatters (issue 28, "new families in the template writer: gather/scatter"): aten.embedding,
aten.index_select, aten.index.Tensor with one index tensor and aten.gather are take nodes lowered to gather kernels
(codegen/gather.py): a flat walk over the output, each lane reading the source at its index with int64 addresses,
fused with the elementwise ops after it (two takes of one shape share the kernel; an embedding of arange(T) is the
table's first T rows, a view; any other arange is allocated in the forward); masked_fill is an elementwise where.
scatter_add and index_add are scatter kernels: a lane per source element adds it into a copy of the base at its index
with tl.atomic_add. Each operator is rendered under the strict policy and verified by the real evaluator under the
interpreter (one trial). Forms the template cannot do are refused with the op and the reason."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import torch
from codegen_helpers import OPERATORS, ROOT, code, evaluate, explain, launched_kinds, request_for
from foundry.core.records import FailureKind
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter, UnsupportedOperator

pytestmark = [pytest.mark.interp]

BREADTH = ROOT / "examples" / "breadth" / "gather_scatter"

# operator path → (the kernels launched, lines the kernel code must hold)
CASES = {
    BREADTH / "embedding_lookup.py": (
        ["gather"],
        ["embedding_idx = tl.load(ids_ptr + embedding_rest // embedding_si, mask=mask, other=0).to(tl.int64)"],
    ),
    BREADTH / "index_select_rows.py": (["gather"], ["index_select_count = index.numel()"]),
    BREADTH / "advanced_index_rows.py": (
        ["gather"],
        ["index_idx = tl.where(index_idx < 0, index_idx + index_n, index_idx)"],  # x[idx]: negatives from the end
    ),
    BREADTH / "gather_dim1.py": (["gather"], ["gather_count = index.shape[1]", "x = x.narrow(0, 0, index.shape[0])"]),
    BREADTH / "masked_fill_bool.py": (["pointwise"], ["tl.where(mask_in, -10000.0, scores)"]),
    BREADTH / "token_plus_position_embedding.py": (  # pos(arange(T)): the table's first T rows, added in the kernel
        ["gather"],
        ["pos_weight_head = pos_weight[:ids.shape[1]]", "y = embedding + pos_weight_head"],
    ),
    OPERATORS / "gather_embedding_scaled.py": (
        ["gather"],
        ["mul = embedding * 8.0", "y = mul + embedding_2", "embedding_2_idx = tl.load(positions_ptr"],
    ),
    OPERATORS / "gather_index_select_middle.py": (
        ["gather"],
        ["index_select_n = x.shape[1]", "index_select_si = math.prod(x.shape[2:])", "tl.maximum"],
    ),
    OPERATORS / "gather_negative_index.py": (["gather"], ["index_idx = tl.where(index_idx < 0, index_idx + index_n"]),
    OPERATORS / "gather_along_middle.py": (["gather"], ["gather_take = (gather_o * gather_n + gather_idx)"]),
    OPERATORS / "gather_narrow_index.py": (["gather"], ["x = x.narrow(0, 0, index.shape[0])"]),
    BREADTH / "cosface_one_hot_margin.py": (  # one_hot: labels compared with an arange the forward allocates
        ["pointwise"],
        ["arange = torch.arange(cos.shape[1], device=cos.device)", "eq = labels_unsqueeze == arange"],
    ),
    BREADTH / "length_mask_where.py": (
        ["pointwise", "pointwise"],
        ["arange = torch.arange(x.shape[1], device=x.device)"],
    ),
    BREADTH / "scatter_add_segments.py": (  # zeros(S, C).scatter_add(0, segment[:, None].expand(-1, C), x)
        ["scatter"],
        ["y = torch.full(shape, 0.0, device=x.device, dtype=torch.float32)", "tl.atomic_add(y_ptr + y_take, y_val"],
    ),
    OPERATORS / "scatter_index_add_middle.py": (
        ["pointwise", "scatter"],  # the relu'd source is written first: atomics take values from memory
        ["y = base_in.contiguous().clone()", "y_n = base_in.shape[1]", "y_count = index.numel()"],
    ),
    OPERATORS / "scatter_add_along.py": (
        ["scatter"],
        ["y_idx = tl.load(index_ptr + offs, mask=mask, other=0).to(tl.int64)", "dim_size=x.shape[1]"],
    ),
}


def writer_for(path: Path) -> tuple[TemplateWriter, object]:
    op = load_operator(str(path))
    return TemplateWriter(loader=lambda ref: op, policy="strict"), op


@pytest.mark.parametrize("path", list(CASES), ids=lambda p: p.stem)
def test_gather_verified_under_strict(path: Path) -> None:
    writer, op = writer_for(path)
    assert writer.check(op.spec) is None  # type: ignore[attr-defined]
    source = writer.render(op.spec, {})  # type: ignore[attr-defined]
    kinds, lines = CASES[path]
    assert launched_kinds(source) == kinds
    for line in lines:
        assert line in code(source), (line, code(source))
    verdict = evaluate(path, source)
    assert verdict.verified, explain(verdict)


def test_a_training_gather_has_a_scatter_backward_and_is_verified() -> None:
    path = OPERATORS / "gather_training.py"
    writer, op = writer_for(path)
    source = writer.render(op.spec, {})  # type: ignore[attr-defined]
    body = code(source)
    assert (
        "def _gather_training_gather_kernel(" in body and "tl.atomic_add(" in body
    )  # forward gather, backward scatter
    verdict = evaluate(path, source)
    assert verdict.verified, explain(verdict)


def test_every_take_masks_its_load_to_the_source_with_int64_addresses() -> None:
    writer, op = writer_for(OPERATORS / "gather_embedding_scaled.py")
    body = code(writer.render(op.spec, {}))  # type: ignore[attr-defined]
    for take, table in (("embedding", "tok_weight"), ("embedding_2", "pos_weight")):
        assert f"{take}_o = (offs // ({take}_count * {take}_si)).to(tl.int64)" in body
        assert f"{table}_ptr + {take}_take, mask=mask & ({take}_idx >= 0) & ({take}_idx < {take}_n), other=0)" in body


def import_source(path: Path, source: str) -> ModuleType:
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_out_of_range_indices_read_nothing(tmp_path: Path) -> None:
    """torch raises on an index outside [-N, N); the kernel cannot, so such a lane's load is masked (it reads 0,
    never past the table), and the lanes with in-range indices (negative ones counted from the end) are exact."""
    writer, op = writer_for(OPERATORS / "gather_negative_index.py")
    module = import_source(tmp_path / "negative.py", writer.render(op.spec, {}))  # type: ignore[attr-defined]
    x = torch.randn(4, 3)
    idx = torch.tensor([-1, 4, 0, -5, 3, 100, -4])
    y = module.ModelNew()(x, idx)
    ok = torch.tensor([True, False, True, False, True, False, True])
    assert torch.equal(y[~ok], torch.zeros(3, 3))
    torch.testing.assert_close(y[ok], torch.tanh(x[idx[ok]] * 2.0), rtol=1e-6, atol=1e-6)


def test_two_takes_of_different_shapes_are_refused_at_the_call(tmp_path: Path) -> None:
    writer, op = writer_for(OPERATORS / "gather_embedding_scaled.py")
    module = import_source(tmp_path / "two.py", writer.render(op.spec, {}))  # type: ignore[attr-defined]
    model = module.ModelNew(11, 7, 6, 8.0)
    with pytest.raises(ValueError, match="its shape differs from the kernel's other take"):
        model(torch.randint(0, 11, (2, 5)), torch.randint(0, 7, (1, 5)))


def test_hybrid_lowers_the_take_instead_of_keeping_a_library_call() -> None:
    path = BREADTH / "index_select_rows.py"
    op = load_operator(str(path))
    writer = TemplateWriter(loader=lambda ref: op, policy="hybrid")
    assert writer.check(op.spec) is None
    source = writer.render(op.spec, {})
    assert launched_kinds(source) == ["gather"]
    assert "index_select(" not in code(source) and "Library ops kept" not in source


FORM = """
import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, index):
        return {expr}


def get_inputs():
    return [torch.randn(64, 32), {index}]


def get_init_inputs():
    return []
"""
# forms written here: (the forward's expression, its index input)
FORMS = {
    "bool_index": ("x[index] * 2.0", "torch.rand(64) > 0.5"),
    "scatter_broadcast_index": (  # an index (n, 1) expanded along the dim it scatters over
        "x.new_zeros(64, 8).scatter_add(1, index[:, None].expand(-1, 32), x)",
        "torch.randint(0, 8, (64,))",
    ),
}


@pytest.mark.parametrize(
    "form",
    [
        ("gather_two_index_tensors", "aten.index.Tensor: 2 index tensors (one index tensor is supported)"),
        ("bool_index", "aten.index.Tensor: an index of dtype torch.bool (int64 and int32 indices are supported)"),
        (
            "scatter_broadcast_index",
            "aten.scatter_add.default: an index of shape [64, 1] for a source of [64, 32]",
        ),
    ],
    ids=lambda f: f[0],
)
def test_forms_the_template_cannot_do_are_refused(form: tuple[str, str], tmp_path: Path) -> None:
    name, message = form
    path = OPERATORS / f"{name}.py"
    if name in FORMS:
        expr, index = FORMS[name]
        path = tmp_path / f"{name}.py"
        path.write_text(FORM.format(expr=expr, index=index))
    writer, op = writer_for(path)
    diagnosis = writer.check(op.spec)  # type: ignore[attr-defined]
    assert diagnosis is not None and diagnosis.kind == FailureKind.UNSUPPORTED
    assert diagnosis.message == message, diagnosis.message
    with pytest.raises(UnsupportedOperator):
        writer.propose(request_for(path))
