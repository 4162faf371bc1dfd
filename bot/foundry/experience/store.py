"""ExperienceStore: the experience library's operations, each one short transaction on the file."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
from pydantic import BaseModel, ConfigDict

from foundry import __version__ as bot_version
from foundry.core.records import Candidate, OperatorSpec, Verdict
from foundry.experience.db import LOCK_TIMEOUT_S, Database, first, now, resolve_path
from foundry.experience.hints import DiagnosisFacts, HintDef, load_seed_hints, seeds_digest
from foundry.experience.live import LiveRuns
from foundry.experience.retrieval import (
    MIN_SIMILARITY,
    HintStats,
    Retrieval,
    RetrievedKernel,
    rank_hints,
    rank_kernels,
)
from foundry.experience.rows import (
    TABLES,
    BestKernelRow,
    CandidateRow,
    HintRow,
    HintUseRow,
    Outcome,
    Row,
    RunRow,
    SignatureRow,
    arrow_batch,
    bulk_insert_sql,
    dedupe,
    insert_sql,
    values,
)
from foundry.experience.schema import MIGRATIONS, Migration
from foundry.experience.signature import OpSignature

if TYPE_CHECKING:
    from foundry.experience.session import RunSession

log = logging.getLogger(__name__)

INTERRUPTED_NOTE = "the run's process ended before the run finished (killed, or its machine lost)"
KERNELS_PER_SIGNATURE = 16  # verified kernels read per stored signature before ranking


class HintResult(BaseModel):
    """How one applied hint did in a run: success = a candidate that applied it verified and beat its
    parent (the optimizer decides); speedup = that candidate's speedup over eager, when measured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    success: bool
    speedup: float | None = None


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def candidate_uid(run_id: str, candidate_id: str) -> str:
    return hashlib.sha256(f"{run_id}\0{candidate_id}".encode()).hexdigest()[:24]


def candidate_row(run: RunRow, candidate: Candidate, verdict: Verdict, *, gpu: str | None = None) -> CandidateRow:
    timing = verdict.timing
    roofline = timing.roofline if timing else None
    failure = verdict.failure
    spills = [k.spills for k in verdict.kernels if k.spills is not None]
    registers = [k.registers for k in verdict.kernels if k.registers is not None]
    measured = timing is not None and timing.measured
    return CandidateRow(
        uid=candidate_uid(run.run_id, candidate.id),
        run_id=run.run_id,
        candidate_id=candidate.id,
        origin_repo=run.origin_repo,
        signature_key=run.signature_key,
        operator=run.operator,
        source_hash=source_hash(candidate.source),
        source=candidate.source,
        writer=candidate.writer,
        expert=candidate.expert,
        island=candidate.island,
        generation=candidate.generation,
        parent_id=candidate.parent_id,
        genes=json.dumps(candidate.genes, sort_keys=True),
        verified=verdict.verified,
        policy=verdict.policy,
        gpu=gpu or (timing.device if timing and timing.device else "") or verdict.device or run.gpu,
        dtype=run.dtype,
        failure_kind=str(failure.kind) if failure else None,
        failure_stage=str(failure.stage) if failure else None,
        diagnosis=failure.model_dump_json() if failure else None,
        candidate_ms=timing.candidate_ms if measured and timing else None,
        eager_ms=timing.eager_ms if measured and timing else None,
        compile_ms=timing.compile_ms if measured and timing else None,
        speedup=timing.speedup_eager if measured and timing else None,
        bound=roofline.bound if roofline else None,
        pct_of_floor=roofline.pct_of_floor if roofline else None,
        spills=max(spills) if spills else None,
        registers=max(registers) if registers else None,
        recorded_at=now(),
    )


BEST_CONFLICT = (
    "DO UPDATE SET candidate_uid = excluded.candidate_uid, run_id = excluded.run_id, "
    "origin_repo = excluded.origin_repo, operator = excluded.operator, source = excluded.source, "
    "source_hash = excluded.source_hash, genes = excluded.genes, speedup = excluded.speedup, "
    "candidate_ms = excluded.candidate_ms, updated_at = excluded.updated_at "
    "WHERE best_kernels.speedup IS NULL AND excluded.speedup IS NOT NULL "
    "OR excluded.speedup > best_kernels.speedup"
)
CANDIDATE_CONFLICT = (
    "DO UPDATE SET verified = excluded.verified, policy = excluded.policy, gpu = excluded.gpu, "
    "failure_kind = excluded.failure_kind, failure_stage = excluded.failure_stage, "
    "diagnosis = excluded.diagnosis, candidate_ms = excluded.candidate_ms, eager_ms = excluded.eager_ms, "
    "compile_ms = excluded.compile_ms, speedup = excluded.speedup, bound = excluded.bound, "
    "pct_of_floor = excluded.pct_of_floor, spills = excluded.spills, registers = excluded.registers, "
    "recorded_at = excluded.recorded_at"
)


def write_batch(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Row], conflict: str = "DO NOTHING") -> None:
    rows = dedupe(table, rows)
    if not rows:
        return
    con.register("batch", arrow_batch(rows))
    try:
        con.execute(bulk_insert_sql(table, conflict))
    finally:
        con.unregister("batch")


def fastest_per_key(rows: Iterable[BestKernelRow]) -> list[BestKernelRow]:
    best: dict[tuple[str, str, str], BestKernelRow] = {}
    for row in rows:
        key = (row.signature_key, row.gpu, row.dtype)
        held = best.get(key)
        if held is None or (row.speedup or 0.0) > (held.speedup or 0.0):
            best[key] = row
    return list(best.values())


def best_row(row: CandidateRow) -> BestKernelRow:
    return BestKernelRow(
        signature_key=row.signature_key,
        gpu=row.gpu,
        dtype=row.dtype,
        candidate_uid=row.uid,
        run_id=row.run_id,
        origin_repo=row.origin_repo,
        operator=row.operator,
        source=row.source,
        source_hash=row.source_hash,
        genes=row.genes,
        speedup=row.speedup,
        candidate_ms=row.candidate_ms,
        updated_at=row.recorded_at,
    )


def fetch_rows(con: duckdb.DuckDBPyConnection, model: type[Row], sql: str, params: Sequence[Any] = ()) -> list:
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [model.model_validate(dict(zip(names, r, strict=True))) for r in cursor.fetchall()]


class ExperienceStore:
    """The experience library in one DuckDB file. Safe to use from many processes at once."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        lock_timeout: float = LOCK_TIMEOUT_S,
        seeds: Sequence[HintDef] | None = None,
        migrations: Sequence[Migration] = MIGRATIONS,
    ) -> None:
        """path: explicit file, else FOUNDRY_EXPERIENCE_DB, else the user cache dir. seeds: the seed
        hints loaded on first use (default: the repository's experience/seeds/*.yaml)."""
        self.path = resolve_path(path)
        self._seeds = tuple(seeds) if seeds is not None else None
        self.live = LiveRuns(self.path)
        self.db = Database(self.path, lock_timeout=lock_timeout, migrations=migrations, on_first_open=self._first_open)

    def __repr__(self) -> str:
        return f"ExperienceStore({str(self.path)!r})"

    @property
    def seeds(self) -> tuple[HintDef, ...]:
        if self._seeds is None:
            self._seeds = load_seed_hints()
        return self._seeds

    def _first_open(self, con: duckdb.DuckDBPyConnection) -> None:
        self._load_seeds_if_changed(con)
        self._close_abandoned_runs(con)

    def _close_abandoned_runs(self, con: duckdb.DuckDBPyConnection) -> None:
        """Runs still `running` that no live process owns (experience.live) become `interrupted`, with the
        counts of the candidates they recorded."""
        running = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE outcome = 'running'").fetchall()]
        closed = [run_id for run_id in running if self.live.abandoned(run_id)]
        for run_id in closed:
            con.execute(
                """UPDATE runs SET outcome = 'interrupted', finished_at = ?, notes = ?,
                       evaluated = (SELECT count(*) FROM candidates c WHERE c.run_id = runs.run_id),
                       verified = (SELECT count(*) FROM candidates c WHERE c.run_id = runs.run_id AND c.verified)
                   WHERE run_id = ? AND outcome = 'running'""",
                [now(), INTERRUPTED_NOTE, run_id],
            )
        for run_id in closed:
            self.live.clear(run_id)
        if closed:
            log.info("experience library %s: %d run(s) whose process ended marked interrupted", self.path, len(closed))

    # -- seeds and hints ------------------------------------------------------------------------

    def _load_seeds_if_changed(self, con: duckdb.DuckDBPyConnection) -> None:
        """Seeds changed since the last load: add new hints and update changed ones (statistics stay).
        A bot older than the one that last loaded seeds only adds, so versions sharing a runner do
        not flip the texts back and forth."""
        digest = seeds_digest(self.seeds)
        meta = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('seeds_digest', 'seeds_by')").fetchall())
        if meta.get("seeds_digest") == digest:
            return
        newer_loaded = version_tuple(meta.get("seeds_by", "0")) > version_tuple(bot_version)
        added, updated = self._upsert_hints(con, self.seeds, origin="seed", replace_changed=not newer_loaded)
        if not newer_loaded:
            for key, value in (("seeds_digest", digest), ("seeds_by", bot_version)):
                con.execute(
                    "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [key, value],
                )
        log.info("experience library %s: seed hints loaded (%d new, %d updated)", self.path, added, updated)

    def load_seeds(self) -> tuple[int, int]:
        """(Re)load the seed hints: new ones are added, changed ones updated (statistics kept). Idempotent."""
        return self.db.run(lambda con: self._upsert_hints(con, self.seeds, origin="seed", replace_changed=True))

    def add_hint(self, hint: HintDef, *, origin: str) -> bool:
        """A hint learned by a run (origin: its repository). Returns False if the id already exists."""
        added, _ = self.db.run(lambda con: self._upsert_hints(con, (hint,), origin=origin, replace_changed=False))
        return added == 1

    def _upsert_hints(
        self, con: duckdb.DuckDBPyConnection, hints: Iterable[HintDef], *, origin: str, replace_changed: bool
    ) -> tuple[int, int]:
        existing = dict(con.execute("SELECT hint_id, content_hash FROM hints").fetchall())
        updated = 0
        stamp = now()
        new: list[HintRow] = []
        for hint in hints:
            digest = hint.content_hash()
            if hint.id not in existing:
                row = HintRow(
                    hint_id=hint.id, origin=origin, title=hint.title, context=hint.context,
                    trigger=hint.trigger.model_dump_json(exclude_defaults=True), suggestion=hint.suggestion,
                    genes=json.dumps(hint.genes, sort_keys=True), prior=hint.prior, content_hash=digest,
                    created_at=stamp, updated_at=stamp,
                )  # fmt: skip
                new.append(row)
            elif replace_changed and existing[hint.id] != digest:
                con.execute(
                    "UPDATE hints SET title = ?, context = ?, trigger = ?, suggestion = ?, genes = ?, prior = ?, "
                    "content_hash = ?, updated_at = ? WHERE hint_id = ? AND origin = ?",
                    [hint.title, hint.context, hint.trigger.model_dump_json(exclude_defaults=True),
                     hint.suggestion, json.dumps(hint.genes, sort_keys=True), hint.prior, digest, stamp,
                     hint.id, origin],
                )  # fmt: skip
                updated += 1
        write_batch(con, "hints", new)
        return len(new), updated

    def hint_stats(self) -> list[HintStats]:
        return self.db.run(self._hint_stats)

    def _hint_stats(self, con: duckdb.DuckDBPyConnection) -> list[HintStats]:
        rows = con.execute(
            """SELECT h.hint_id, h.origin, h.title, h.context, h.trigger, h.suggestion, h.genes, h.prior,
                      count(u.hint_id) AS tries,
                      count(u.hint_id) FILTER (WHERE u.success) AS successes,
                      avg(u.speedup) AS mean_speedup
               FROM hints h LEFT JOIN hint_uses u ON u.hint_id = h.hint_id
               GROUP BY ALL ORDER BY h.hint_id"""
        ).fetchall()
        out = []
        for hint_id, origin, title, context, trigger, suggestion, genes, prior, tries, successes, mean in rows:
            definition = HintDef.model_validate(
                {"id": hint_id, "title": title, "context": context, "trigger": json.loads(trigger),
                 "suggestion": suggestion, "genes": json.loads(genes), "prior": prior}
            )  # fmt: skip
            out.append(HintStats(definition=definition, origin=origin, tries=tries, successes=successes,
                                 mean_speedup=mean))  # fmt: skip
        return out

    # -- runs and candidates ----------------------------------------------------------------------

    def record_run(self, run: RunRow, signature: OpSignature) -> None:
        def work(con: duckdb.DuckDBPyConnection) -> None:
            self._put_signature(con, signature)
            con.execute(insert_sql("runs"), values(run))

        self.db.run(work)

    def _put_signature(self, con: duckdb.DuckDBPyConnection, signature: OpSignature) -> None:
        row = SignatureRow(key=signature.key, family=signature.family, dtype=signature.dtype,
                           body=signature.to_json(), created_at=now())  # fmt: skip
        con.execute(insert_sql("signatures"), values(row))

    def record_candidates(self, rows: Sequence[CandidateRow], *, timeout: float | None = None) -> None:
        """Write candidate rows in one transaction; verified ones may become the best kernel of their
        (signature, GPU, dtype). Re-recording a candidate replaces its verdict."""
        if not rows:
            return

        def work(con: duckdb.DuckDBPyConnection) -> None:
            write_batch(con, "candidates", rows, CANDIDATE_CONFLICT)
            write_batch(con, "best_kernels", fastest_per_key(best_row(r) for r in rows if r.verified), BEST_CONFLICT)

        self.db.run(work, timeout=timeout)

    def finish_run(
        self,
        run_id: str,
        *,
        outcome: Outcome,
        evaluated: int,
        verified: int,
        best_uid: str | None = None,
        best_speedup: float | None = None,
        helped: bool | None = None,
        hint_results: Mapping[str, HintResult] | None = None,
        notes: str = "",
        timeout: float | None = None,
    ) -> None:
        """Close a run and reinforce the hints it applied, in one transaction. Reinforcement is one use
        per (run, hint): finishing twice does not count twice."""

        def work(con: duckdb.DuckDBPyConnection) -> None:
            row = first(con.execute("SELECT origin_repo FROM runs WHERE run_id = ?", [run_id]))
            if row is None:
                raise KeyError(f"no run {run_id!r} in {self.path}")
            con.execute(
                "UPDATE runs SET finished_at = ?, outcome = ?, evaluated = ?, verified = ?, best_candidate_uid = ?, "
                "best_speedup = ?, helped = ?, notes = ? WHERE run_id = ?",
                [now(), outcome, evaluated, verified, best_uid, best_speedup, helped, notes, run_id],
            )
            self._reinforce(con, run_id, row[0], hint_results or {})

        self.db.run(work, timeout=timeout)
        self.live.clear(run_id)  # after the outcome is written: until then the run is this process's

    def reinforce(self, run_id: str, origin_repo: str, hint_results: Mapping[str, HintResult]) -> None:
        self.db.run(lambda con: self._reinforce(con, run_id, origin_repo, hint_results))

    def _reinforce(
        self, con: duckdb.DuckDBPyConnection, run_id: str, origin_repo: str, results: Mapping[str, HintResult]
    ) -> None:
        known = {r[0] for r in con.execute("SELECT hint_id FROM hints").fetchall()}
        stamp = now()
        for hint_id, result in sorted(results.items()):
            if hint_id not in known:
                log.warning("experience: run %s applied unknown hint %r; not reinforced", run_id, hint_id)
                continue
            use = HintUseRow(run_id=run_id, hint_id=hint_id, origin_repo=origin_repo, success=result.success,
                             speedup=result.speedup, used_at=stamp)  # fmt: skip
            con.execute(
                insert_sql("hint_uses", "DO UPDATE SET success = excluded.success, speedup = excluded.speedup, "
                                        "used_at = excluded.used_at"),
                values(use),
            )  # fmt: skip

    def note_retrieval(self, run_id: str, retrieval: Retrieval) -> None:
        self.db.run(
            lambda con: con.execute(
                "UPDATE runs SET retrieved_hints = ?, retrieved_kernels = ? WHERE run_id = ?",
                [json.dumps([h.hint.id for h in retrieval.hints]), json.dumps([k.uid for k in retrieval.kernels]),
                 run_id],
            )
        )  # fmt: skip

    # -- retrieval ----------------------------------------------------------------------------------

    def retrieve_for(
        self,
        signature: OpSignature | None,
        facts: DiagnosisFacts | None = None,
        k: int = 4,
        *,
        gpu: str | None = None,
        expert: str | None = None,
        min_similarity: float = MIN_SIMILARITY,
    ) -> Retrieval:
        """The top-k verified kernels most similar to `signature` (best first; same GPU and dtype
        preferred; faster preferred) and the top-k hints whose triggers hold for the signature and the
        diagnosis facts (None at run start: only signature-triggered hints match)."""

        def work(con: duckdb.DuckDBPyConnection) -> Retrieval:
            kernels: tuple[RetrievedKernel, ...] = ()
            unfit: list[str] = []
            if signature is not None and k > 0:
                kernels = rank_kernels(
                    signature, self._verified(con), k, gpu=gpu, min_similarity=min_similarity, unfit=unfit
                )
            hints = rank_hints(self._hint_stats(con), signature, facts, k, expert=expert)
            return Retrieval(kernels=kernels, hints=hints, unfit=tuple(unfit))

        return self.db.run(work)

    def _verified(self, con: duckdb.DuckDBPyConnection) -> list[tuple[CandidateRow, OpSignature]]:
        bodies = dict(con.execute("SELECT key, body FROM signatures").fetchall())
        rows = fetch_rows(
            con,
            CandidateRow,
            """SELECT * FROM (
                   SELECT * FROM candidates WHERE verified
                   QUALIFY row_number() OVER (PARTITION BY signature_key, gpu, source_hash
                                              ORDER BY speedup DESC NULLS LAST, recorded_at) = 1)
               QUALIFY row_number() OVER (PARTITION BY signature_key
                                          ORDER BY speedup DESC NULLS LAST, recorded_at) <= ?""",
            [KERNELS_PER_SIGNATURE],
        )
        signatures = {key: OpSignature.from_json(body) for key, body in bodies.items()}
        return [(row, signatures[row.signature_key]) for row in rows if row.signature_key in signatures]

    # -- reading ----------------------------------------------------------------------------------------

    def read_table(self, table: str) -> list[Row]:
        model, key = TABLES[table]
        order = ", ".join(key)
        return self.db.run(lambda con: fetch_rows(con, model, f"SELECT * FROM {table} ORDER BY {order}"))

    def count(self, table: str, where: str = "TRUE") -> int:
        if table not in TABLES:
            raise KeyError(table)
        return self.db.run(lambda con: first(con.execute(f"SELECT count(*) FROM {table} WHERE {where}"))[0])

    def run_row(self, run_id: str) -> RunRow | None:
        rows = self.db.run(lambda con: fetch_rows(con, RunRow, "SELECT * FROM runs WHERE run_id = ?", [run_id]))
        return rows[0] if rows else None

    def best_kernels(self, limit: int = 10) -> list[BestKernelRow]:
        return self.db.run(
            lambda con: fetch_rows(
                con, BestKernelRow,
                "SELECT * FROM best_kernels ORDER BY speedup DESC NULLS LAST, updated_at DESC LIMIT ?", [limit],
            )
        )  # fmt: skip

    def signature(self, key: str) -> OpSignature | None:
        row = self.db.run(lambda con: first(con.execute("SELECT body FROM signatures WHERE key = ?", [key])))
        return OpSignature.from_json(row[0]) if row else None

    def schema_version(self) -> int:
        return self.db.run(self.db.schema_version)

    def file_path(self) -> Path:
        return self.path

    # -- runs -------------------------------------------------------------------------------------------

    def start_run(self, spec: OperatorSpec, signature: OpSignature, **context: Any) -> RunSession:
        """Record a new run and return its session (the ExperienceSink). context: repo, commit, gpu,
        budget, torch_version, triton_version, flush_every, run_id — see session.start_run."""
        from foundry.experience.session import start_run  # session builds on the store

        return start_run(self, spec, signature, **context)
