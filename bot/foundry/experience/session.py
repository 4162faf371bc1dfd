"""RunSession: one optimizer run's view of the library; it implements core.protocols.ExperienceSink."""

from __future__ import annotations

import json
import logging
import re
import threading
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from foundry import __version__ as bot_version
from foundry.core.protocols import Hint
from foundry.core.records import Candidate, ExperienceNote, OperatorSpec, Verdict
from foundry.experience.db import now
from foundry.experience.errors import ExperienceError, LibraryBusyError
from foundry.experience.hints import DiagnosisFacts
from foundry.experience.retrieval import RETRIEVED_PREFIX, Retrieval
from foundry.experience.rows import CandidateRow, HintUseRow, Outcome, RunRow
from foundry.experience.signature import OpSignature
from foundry.experience.store import (
    ExperienceStore,
    HintResult,
    best_row,
    candidate_row,
    candidate_uid,
    fastest_per_key,
)

log = logging.getLogger(__name__)

RECORD_TIMEOUT_S = 5.0  # per record: a busy library must not stall the search; rows wait in memory


class RunSession:
    """Created by start_run. record() writes each evaluated candidate in its own short transaction
    (flush_every > 1 groups them); when the file stays locked past RECORD_TIMEOUT_S the rows wait in
    memory and go with the next write; finish() writes whatever is left, waiting up to the store's
    full lock timeout."""

    def __init__(self, store: ExperienceStore, run: RunRow, signature: OpSignature, *, flush_every: int = 1):
        self.store = store
        self.run = run
        self.signature = signature
        self.flush_every = max(1, flush_every)
        self.pending: list[CandidateRow] = []
        self.retrieval = Retrieval()
        self.parents: dict[str, str | None] = {}
        self.evaluated = 0
        self.verified = 0
        self.finished = False
        self.offered: dict[str, Hint] = {}  # hints given to this run's writers
        self.inferred: dict[str, HintResult] = {}  # how the candidates that applied them did
        self.lineage_hints: dict[str, frozenset[str]] = {}  # candidate id → hints its lineage applied
        self.lock = threading.RLock()  # record() may come from evaluation threads

    @property
    def run_id(self) -> str:
        return self.run.run_id

    # -- ExperienceSink ------------------------------------------------------------------------------

    def retrieve(self, spec: OperatorSpec, k: int) -> tuple[Sequence[Hint], Sequence[Candidate]]:
        """At run start: top-k similar verified kernels and the hints whose signature triggers match."""
        self.retrieval = self.store.retrieve_for(self.signature, None, k, gpu=self.run.gpu)
        self.offered.update((h.hint.id, h.hint) for h in self.retrieval.hints)
        self.store.note_retrieval(self.run_id, self.retrieval)
        log.info("experience: %s", self.retrieval.summary())
        return self.retrieval.hint_records(), self.retrieval.candidates()

    def record(self, spec: OperatorSpec, candidate: Candidate, verdict: Verdict) -> None:
        with self.lock:
            self._record(candidate, verdict)

    def _record(self, candidate: Candidate, verdict: Verdict) -> None:
        self.evaluated += 1
        self.verified += int(verdict.verified)
        self.parents[candidate.id] = candidate.parent_id
        self.pending.append(candidate_row(self.run, candidate, verdict))
        self.note_hint_uses(candidate, verdict)
        if len(self.pending) >= self.flush_every:
            self.flush(timeout=RECORD_TIMEOUT_S)

    # -- during the run --------------------------------------------------------------------------------

    def hints_for(self, facts: DiagnosisFacts, k: int = 3, *, expert: str | None = None) -> tuple[Hint, ...]:
        """Hints for a lineage's latest diagnosis (bound class, failure kind, spills …)."""
        hints = self.store.retrieve_for(self.signature, facts, k, expert=expert).hint_records()
        self.offered.update((h.id, h) for h in hints)
        return hints

    def note_hint_uses(self, candidate: Candidate, verdict: Verdict) -> None:
        """Infer which offered hints a candidate applied: those its notes name (the template writer
        notes "warm start from hint <id>"), and those of its parent's lineage. How that went: rejected
        = a failed try; verified and timed = success when faster than eager; verified but not timed
        = no evidence either way. Explicit applied_hints at finish() take precedence."""
        named = {hint_id for hint_id in self.offered if names_hint(candidate.notes, hint_id)}
        inherited = self.lineage_hints.get(candidate.parent_id or "", frozenset())
        applied = self.lineage_hints[candidate.id] = frozenset(named) | inherited
        timing = verdict.timing
        speedup = timing.speedup_eager if timing is not None and timing.measured else None
        if not applied or (verdict.verified and speedup is None):
            return
        result = HintResult(success=verdict.verified and speedup is not None and speedup > 1.0, speedup=speedup)
        for hint_id in applied:
            held = self.inferred.get(hint_id)
            if held is None or (result.success, result.speedup or 0.0) > (held.success, held.speedup or 0.0):
                self.inferred[hint_id] = result

    def flush(self, timeout: float | None = None) -> bool:
        """Write pending rows. False when the library stayed busy (rows kept for the next try)."""
        with self.lock:
            return self._flush(timeout)

    def _flush(self, timeout: float | None) -> bool:
        if not self.pending:
            return True
        try:
            self.store.record_candidates(self.pending, timeout=timeout)
        except LibraryBusyError as exc:
            log.warning("experience: %d record(s) wait in memory: %s", len(self.pending), exc)
            return False
        self.pending.clear()
        return True

    # -- at run end --------------------------------------------------------------------------------------

    def finish(
        self,
        outcome: Outcome,
        *,
        best: Candidate | None = None,
        best_verdict: Verdict | None = None,
        applied_hints: Mapping[str, HintResult] | None = None,
        notes: str = "",
    ) -> ExperienceNote:
        """Record the outcome, the best kernel (re-verified verdict) and the hints' results: those the
        optimizer reports in applied_hints, else those inferred from the recorded candidates (see
        note_hint_uses). Returns what the library contributed, for the report. Never raises for the
        library: when it stays busy or unreadable, the run's records go to an export file beside it
        (`<library>.unsaved-<run>.parquet`, merged by `foundry experience import`) and the note says so."""
        if best is not None and best_verdict is not None:
            self.parents.setdefault(best.id, best.parent_id)
            self.pending.append(candidate_row(self.run, best, best_verdict))
        results = {**self.inferred, **(applied_hints or {})}  # what the optimizer says wins
        helped = self.helped(best, results)
        speedup = None
        if best_verdict is not None and best_verdict.timing is not None and best_verdict.timing.measured:
            speedup = best_verdict.timing.speedup_eager
        finished = dict(outcome=outcome, evaluated=self.evaluated, verified=self.verified, helped=helped,
                        best_uid=candidate_uid(self.run_id, best.id) if best else None, best_speedup=speedup,
                        notes=notes)  # fmt: skip
        self.finished = True
        note = self.retrieval.note(helped)
        try:
            if not self.flush():
                raise LibraryBusyError(f"{self.store.path}: could not write {len(self.pending)} record(s)")
            self.store.finish_run(self.run_id, hint_results=results, **finished)
        except ExperienceError as exc:
            saved = self.save_unsaved(finished, results)
            log.error("experience: the run's records could not be written (%s); saved to %s — merge them with "
                      "`foundry experience import %s`", exc, saved, saved)  # fmt: skip
            note = note.model_copy(
                update={"summary": f"{note.summary} (library unavailable: records saved to {saved})"}
            )
        return note

    def save_unsaved(self, finished: dict, results: Mapping[str, HintResult]) -> Path:
        """The records the library did not take, as an export file beside it (import merges them)."""
        from foundry.experience.exchange import write_rows

        stamp = now()
        run = self.run.model_copy(
            update={
                "finished_at": stamp, "outcome": finished["outcome"], "evaluated": finished["evaluated"],
                "verified": finished["verified"], "best_candidate_uid": finished["best_uid"],
                "best_speedup": finished["best_speedup"], "helped": finished["helped"], "notes": finished["notes"],
            }
        )  # fmt: skip
        uses = [HintUseRow(run_id=self.run_id, hint_id=hint_id, origin_repo=self.run.origin_repo, success=r.success,
                           speedup=r.speedup, used_at=stamp) for hint_id, r in sorted(results.items())]  # fmt: skip
        path = self.store.path.with_name(f"{self.store.path.name}.unsaved-{self.run_id}.parquet")
        best = fastest_per_key(best_row(row) for row in self.pending if row.verified)
        tables = {"runs": [run], "candidates": list(self.pending), "hint_uses": uses, "best_kernels": best}
        write_rows(path, tables)
        self.pending.clear()
        return path

    def lineage_root(self, candidate_id: str) -> str:
        seen: set[str] = set()
        current = candidate_id
        while current not in seen:
            seen.add(current)
            parent = self.parents.get(current)
            if parent is None:
                return current
            current = parent
        return current

    def helped(self, best: Candidate | None, applied: Mapping[str, HintResult]) -> bool | None:
        """Did retrieved material help? True when the best candidate descends from a retrieved kernel
        or a retrieved hint that was applied succeeded; None when nothing was retrieved."""
        if not self.retrieval.kernels and not self.retrieval.hints:
            return None
        retrieved_hints = {h.hint.id for h in self.retrieval.hints}
        if any(result.success for hint_id, result in applied.items() if hint_id in retrieved_hints):
            return True
        if best is None:
            return False
        root = self.lineage_root(best.id)
        return root.startswith(RETRIEVED_PREFIX) or any(k.candidate.id in root for k in self.retrieval.kernels)

    def __enter__(self) -> RunSession:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: object, tb: object) -> None:
        if self.finished:
            return
        outcome: Outcome = "crashed" if exc_type is not None else "failed"
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):  # Ctrl-C, or SIGTERM in the CLI
            outcome = "interrupted"
        try:
            self.finish(outcome, notes="the run ended without calling finish()")
        except Exception:  # never mask the run's own exception
            log.exception("experience: could not close run %s", self.run_id)


def names_hint(notes: str, hint_id: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(hint_id)}(?![\w-])", notes) is not None


def start_run(
    store: ExperienceStore,
    spec: OperatorSpec,
    signature: OpSignature,
    *,
    repo: str = "local",
    commit: str = "",
    gpu: str = "",
    budget: int = 0,
    torch_version: str = "",
    triton_version: str = "",
    flush_every: int = 1,
    run_id: str | None = None,
) -> RunSession:
    run = RunRow(
        run_id=run_id or uuid.uuid4().hex,
        origin_repo=repo,
        commit_sha=commit,
        operator=spec.name,
        operator_path=spec.ref,
        source_hash=spec.source_hash,
        signature_key=signature.key,
        gpu=gpu,
        dtype=spec.dtype,
        torch_version=torch_version,
        triton_version=triton_version,
        bot_version=str(bot_version),
        budget=budget,
        started_at=now(),
        notes=json.dumps({"signature": signature.describe()}),
    )
    store.live.mark(run.run_id)  # before the row: a `running` row without a live owner is closed on open
    try:
        store.record_run(run, signature)
    except BaseException:
        store.live.clear(run.run_id)
        raise
    return RunSession(store, run, signature, flush_every=flush_every)
