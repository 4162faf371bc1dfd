"""Rows of the experience library's tables, as validated records: what is read from and written to
DuckDB, and what travels in export files. Field order and names are the table's columns."""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Outcome = Literal["running", "improved", "verified", "no_gain", "failed", "crashed", "interrupted"]


class SignatureRow(Row):
    key: str
    family: str
    dtype: str
    body: str  # OpSignature as JSON
    created_at: datetime


class RunRow(Row):
    run_id: str
    origin_repo: str
    commit_sha: str
    operator: str
    operator_path: str
    source_hash: str
    signature_key: str
    gpu: str
    dtype: str
    torch_version: str
    triton_version: str
    bot_version: str
    budget: int
    started_at: datetime
    finished_at: datetime | None = None
    outcome: Outcome = "running"
    evaluated: int = 0
    verified: int = 0
    best_candidate_uid: str | None = None
    best_speedup: float | None = None
    retrieved_hints: str = "[]"  # JSON list of hint ids
    retrieved_kernels: str = "[]"  # JSON list of candidate uids
    helped: bool | None = None
    notes: str = ""


class CandidateRow(Row):
    uid: str
    run_id: str
    candidate_id: str
    origin_repo: str
    signature_key: str
    operator: str
    source_hash: str
    source: str
    writer: str
    expert: str
    island: int
    generation: int
    parent_id: str | None
    genes: str  # JSON object
    verified: bool
    policy: str
    gpu: str
    dtype: str
    failure_kind: str | None = None
    failure_stage: str | None = None
    diagnosis: str | None = None  # the first Diagnosis as JSON
    candidate_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    speedup: float | None = None
    bound: str | None = None
    pct_of_floor: float | None = None
    spills: int | None = None
    registers: int | None = None
    recorded_at: datetime


class HintRow(Row):
    hint_id: str
    origin: str  # "seed", or the repository that taught it
    title: str
    context: str
    trigger: str  # Trigger as JSON
    suggestion: str
    genes: str  # JSON object
    prior: float
    content_hash: str
    created_at: datetime
    updated_at: datetime


class HintUseRow(Row):
    run_id: str
    hint_id: str
    origin_repo: str
    success: bool
    speedup: float | None = None
    used_at: datetime


class BestKernelRow(Row):
    signature_key: str
    gpu: str
    dtype: str
    candidate_uid: str
    run_id: str
    origin_repo: str
    operator: str
    source: str
    source_hash: str
    genes: str
    speedup: float | None = None
    candidate_ms: float | None = None
    updated_at: datetime


# table → (row model, primary-key columns); the order is the export order
TABLES: dict[str, tuple[type[Row], tuple[str, ...]]] = {
    "signatures": (SignatureRow, ("key",)),
    "hints": (HintRow, ("hint_id",)),
    "runs": (RunRow, ("run_id",)),
    "candidates": (CandidateRow, ("uid",)),
    "hint_uses": (HintUseRow, ("run_id", "hint_id")),
    "best_kernels": (BestKernelRow, ("signature_key", "gpu", "dtype")),
}


def columns(model: type[Row]) -> tuple[str, ...]:
    return tuple(model.model_fields)


def insert_sql(table: str, conflict: str = "DO NOTHING") -> str:
    model, key = TABLES[table]
    cols = columns(model)
    marks = ", ".join("?" for _ in cols)
    return f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks}) ON CONFLICT ({', '.join(key)}) {conflict}"


def values(row: Row) -> list[object]:
    return [getattr(row, name) for name in type(row).model_fields]


ARROW_TYPES = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_(), datetime: pa.timestamp("us")}


def arrow_type(annotation: object) -> pa.DataType:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return pa.string()
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return arrow_type(args[0])
    return ARROW_TYPES[annotation]  # type: ignore[index]


def arrow_schema(model: type[Row]) -> pa.Schema:
    return pa.schema([(name, arrow_type(field.annotation)) for name, field in model.model_fields.items()])


def arrow_batch(rows: Sequence[Row]) -> pa.Table:
    model = type(rows[0])
    return pa.Table.from_pylist([row.model_dump() for row in rows], schema=arrow_schema(model))


def bulk_insert_sql(table: str, conflict: str = "DO NOTHING", source: str = "batch") -> str:
    """INSERT … SELECT from a registered Arrow table: one statement per batch, not one per row."""
    model, key = TABLES[table]
    cols = ", ".join(columns(model))
    return f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {source} ON CONFLICT ({', '.join(key)}) {conflict}"


def dedupe(table: str, rows: Sequence[Row]) -> list[Row]:
    """The last row per primary key: one statement may not touch a key twice."""
    key = TABLES[table][1]
    return list({tuple(getattr(r, k) for k in key): r for r in rows}.values())
