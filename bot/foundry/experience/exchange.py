"""Export the library to one Parquet file and merge such files into another library.

The file holds one row per table row: `table`, `key` (the primary key, joined), `origin` (the
repository the record came from) and `row` (the record as JSON, validated on import against the
table's row model). Key-value metadata names the format and the schema version that wrote it.
Import merges idempotently: a row whose key is already present is skipped (records keep their
origin repository), except best kernels, where the faster one wins.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, ValidationError

from foundry.experience.db import first
from foundry.experience.errors import ExperienceError, SchemaTooNewError
from foundry.experience.rows import TABLES, Row
from foundry.experience.schema import SCHEMA_VERSION
from foundry.experience.store import BEST_CONFLICT, ExperienceStore, fastest_per_key, fetch_rows, write_batch

log = logging.getLogger(__name__)

FORMAT = "kernel-foundry-experience"
ARROW_SCHEMA = pa.schema([("table", pa.string()), ("key", pa.string()), ("origin", pa.string()), ("row", pa.string())])
ORIGIN_FIELD = {"hints": "origin"}  # other tables name it origin_repo; signatures have none


class ExchangeReport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    rows: dict[str, int]  # table → rows in the file
    added: dict[str, int] = {}  # table → rows new to the library (import only)
    improved_best: int = 0  # best kernels replaced by a faster imported one

    @property
    def total_added(self) -> int:
        return sum(self.added.values())


def row_key(table: str, row: Row) -> str:
    return "\x1f".join(str(getattr(row, name)) for name in TABLES[table][1])


def row_origin(table: str, row: Row) -> str:
    field = ORIGIN_FIELD.get(table, "origin_repo")
    return str(getattr(row, field, "") or "")


def export_parquet(store: ExperienceStore, path: Path) -> ExchangeReport:
    def work(con: duckdb.DuckDBPyConnection) -> dict[str, list[Row]]:
        out = {}
        for table, (model, key) in TABLES.items():
            out[table] = fetch_rows(con, model, f"SELECT * FROM {table} ORDER BY {', '.join(key)}")
        return out

    snapshot = store.db.run(work)  # one transaction: a consistent snapshot
    return write_rows(path, snapshot)


def write_rows(path: Path, tables: Mapping[str, Sequence[Row]]) -> ExchangeReport:
    """Rows of any tables into one export file (atomically: a reader never sees half a file). The metadata
    names the format and schema only: exports move between machines, so no local path goes into them."""
    records: dict[str, list[str]] = {"table": [], "key": [], "origin": [], "row": []}
    for table, rows in tables.items():
        for row in rows:
            records["table"].append(table)
            records["key"].append(row_key(table, row))
            records["origin"].append(row_origin(table, row))
            records["row"].append(row.model_dump_json())
    metadata = {"format": FORMAT, "schema_version": str(SCHEMA_VERSION)}
    table = pa.table(records, schema=ARROW_SCHEMA.with_metadata(metadata))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)
    return ExchangeReport(path=str(path), rows={t: len(r) for t, r in tables.items()})


def read_export(path: Path) -> dict[str, list[Row]]:
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        raise ExperienceError(f"{path}: not a readable Parquet export of an experience library: {exc}") from exc
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if meta.get("format") != FORMAT:
        raise ExperienceError(f"{path}: not an experience-library export (format {meta.get('format')!r})")
    version = int(meta.get("schema_version", "0"))
    if version > SCHEMA_VERSION:
        raise SchemaTooNewError(
            f"{path}: exported with schema version {version}; this bot knows versions up to {SCHEMA_VERSION}. "
            "Upgrade the bot to import it."
        )
    out: dict[str, list[Row]] = {t: [] for t in TABLES}
    for i, (name, raw) in enumerate(zip(table.column("table").to_pylist(), table.column("row").to_pylist(),
                                        strict=True)):  # fmt: skip
        if name not in TABLES:
            raise ExperienceError(f"{path}: row {i} belongs to unknown table {name!r}")
        try:
            out[name].append(TABLES[name][0].model_validate(json.loads(raw)))
        except (ValueError, ValidationError) as exc:
            raise ExperienceError(f"{path}: row {i} ({name}) is invalid: {exc}") from exc
    return out


def import_parquet(store: ExperienceStore, path: Path) -> ExchangeReport:
    incoming = read_export(path)

    def work(con: duckdb.DuckDBPyConnection) -> ExchangeReport:
        added: dict[str, int] = {}
        improved = 0
        for table, rows in incoming.items():
            before = first(con.execute(f"SELECT count(*) FROM {table}"))[0]
            if table == "best_kernels":
                previous = dict(con.execute("SELECT signature_key || gpu || dtype, candidate_uid FROM best_kernels")
                                .fetchall())  # fmt: skip
                write_batch(con, table, fastest_per_key(rows), BEST_CONFLICT)  # type: ignore[arg-type]
                current = dict(con.execute("SELECT signature_key || gpu || dtype, candidate_uid FROM best_kernels")
                               .fetchall())  # fmt: skip
                improved = sum(1 for key, uid in previous.items() if current.get(key) != uid)
            else:
                write_batch(con, table, rows)
            added[table] = first(con.execute(f"SELECT count(*) FROM {table}"))[0] - before
        return ExchangeReport(path=str(path), rows={t: len(r) for t, r in incoming.items()}, added=added,
                              improved_best=improved)  # fmt: skip

    report = store.db.run(work)
    log.info("imported %s into %s: %d new record(s)", path, store.path, report.total_added)
    return report
