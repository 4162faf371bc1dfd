"""Scans (issue 28, "new families in the template writer: scans"): aten.cumsum, aten.cumprod and aten.logcumsumexp
along one dim are lowered to scan kernels (codegen/scan.py): one program per block of rows, tl.cumsum / tl.cumprod
(tl.associative_scan with a log-add-exp for logcumsumexp) over a tile in registers with a running carry across
tiles, fused with the elementwise ops before and after the scan; a reverse scan written as flip, cumsum, flip needs
no flip. Each operator is rendered under the strict policy and verified by the real evaluator under the
interpreter (one trial)."""

from __future__ import annotations

from pathlib import Path

import pytest
from codegen_helpers import OPERATORS, code, evaluate, explain, launched_kinds, request_for
from foundry.core.records import FailureKind
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter, UnsupportedOperator

pytestmark = [pytest.mark.interp]

# operator → (genes, the kernels launched, lines the kernel code must hold)
CASES = {
    "scan_cumsum_chain": ({}, ["scan"], ["x * mask", "tl.cumsum(tl.where(mask, mul, 0.0), axis=1)", "tl.sigmoid"]),
    "scan_cumprod_chain": (
        {},
        ["scan", "scan"],
        [
            "tl.cumprod(tl.where(mask, add, 1.0), axis=1)",
            "tl.cumsum(tl.where(mask, rewards, 0.0), axis=1, reverse=True)",
        ],
    ),
    "scan_long_rows": ({"scan.BLOCK_N": 256}, ["scan", "scan"], ["min(next_power_of_2(N), 256)", "reverse=True"]),
    "scan_fp16": ({}, ["scan"], ["x * w", "* 0.125"]),
    "scan_logcumsumexp": ({"scan.BLOCK_N": 256}, ["scan"], ["tl.associative_scan(", "_logaddexp(logcumsumexp_carry"]),
    "scan_middle_dim": ({}, ["scan"], ["INNER = math.prod(shape[2:])", "tl.maximum"]),
}


def writer_for(path: Path) -> tuple[TemplateWriter, object]:
    op = load_operator(str(path))
    return TemplateWriter(loader=lambda ref: op, policy="strict"), op


@pytest.mark.parametrize("name", list(CASES))
def test_scan_verified_under_strict(name: str) -> None:
    path = OPERATORS / f"{name}.py"
    writer, op = writer_for(path)
    assert writer.check(op.spec) is None  # type: ignore[attr-defined]
    genes, kinds, lines = CASES[name]
    source = writer.render(op.spec, genes)  # type: ignore[attr-defined]
    assert launched_kinds(source) == kinds
    assert "flip" not in code(source)  # a reverse scan reads the row backwards; nothing is flipped
    for line in lines:
        assert line in code(source), (line, code(source))
    verdict = evaluate(path, source)
    assert verdict.verified, explain(verdict)


def test_scan_kernel_carries_the_running_value_across_tiles() -> None:
    writer, op = writer_for(OPERATORS / "scan_long_rows.py")
    body = code(writer.render(op.spec, {"scan.BLOCK_N": 256}))  # type: ignore[attr-defined]
    assert "for tile in range(0, tiles):" in body
    assert "start = (tiles - 1 - tile) * BLOCK_N" in body  # the reverse scan walks its tiles from the end
    assert "_carry = tl.sum(tl.where(lanes == 0," in body and "_carry = tl.sum(tl.where(lanes == BLOCK_N - 1," in body


def test_a_flip_not_around_a_scan_stays_unsupported() -> None:
    path = OPERATORS / "scan_flip_alone.py"
    writer, op = writer_for(path)
    diagnosis = writer.check(op.spec)  # type: ignore[attr-defined]
    assert diagnosis is not None and diagnosis.kind == FailureKind.UNSUPPORTED
    assert diagnosis.message.startswith("aten.flip.default: a flip is lowered only around a scan"), diagnosis.message
    with pytest.raises(UnsupportedOperator):
        writer.propose(request_for(path))
