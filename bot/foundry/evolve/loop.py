"""The search: propose → evaluate → record, generation after generation, on K islands.

Each generation every island picks a parent by tournament, asks a writer (rotating over the writers
given) for children of that parent with the parent's diagnosis, and the executor evaluates the
generation. Islands that have not improved for `patience` generations receive the elites of the
best other island. The search stops when the budget of candidates, wall time or LLM tokens is spent;
the best verified candidates are then re-verified with new seeds (and a longer timing run on a GPU)
and the first that passes again is the result.

The loop sees writers, the evaluator and the experience library only through protocols, and is
deterministic given a seed: all randomness comes from seeded generators, and verdicts are recorded
in proposal order whatever order they finished in.
"""

from __future__ import annotations

import hashlib
import logging
import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from foundry.core.errors import UnsupportedOperatorError
from foundry.core.protocols import ExperienceSink, Hint, ProposalRequest, Writer
from foundry.core.records import (
    Candidate,
    Diagnosis,
    ExperienceNote,
    FailureKind,
    GenerationPoint,
    IslandSummary,
    OperatorSpec,
    Stage,
    Verdict,
)
from foundry.evolve.budget import Budget, BudgetTracker, TokenMeter
from foundry.evolve.executor import Executor
from foundry.evolve.experts import ExpertRole, assign_experts
from foundry.evolve.island import Island, Member
from foundry.evolve.progress import NoProgress, Progress, ProgressState

log = logging.getLogger(__name__)

SPARES = 3  # a free writer is asked for this many times the children it must deliver
MIGRATIONS_LISTED = 12  # migrations described one by one in the result (all are counted)
FAILURE_KIND_GENE = "failure_kind"  # a writer's failed candidate may name its kind (e.g. "unsupported")


@runtime_checkable
class LineageHints(Protocol):
    """An experience library that also knows hints for a lineage's latest diagnosis."""

    def hints_for_verdict(self, verdict: Verdict, k: int, expert: str) -> Sequence[Hint]: ...


class SearchConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    islands: int = Field(default=4, ge=1)
    budget: Budget = Field(default_factory=Budget)
    seed: int = 0
    offspring: int | None = Field(default=None, ge=1)  # children per island per generation
    population_size: int = Field(default=8, ge=1)
    elite_size: int = Field(default=3, ge=1)
    tournament_size: int = Field(default=3, ge=1)
    patience: int = Field(default=3, ge=1)  # generations without improvement before migration
    migrants: int = Field(default=1, ge=1)
    retrieve: int = Field(default=5, ge=0)  # hints and past kernels asked of the experience library
    lineage_hints: int = Field(default=3, ge=0)  # hints asked for each parent's diagnosis
    max_barren: int = Field(default=3, ge=1)  # generations with nothing new before giving up
    finalists: int = Field(default=3, ge=1)  # best candidates tried in turn for re-verification
    library_share: float = Field(default=0.25, ge=0, le=1)  # of the budget, for re-verifying past kernels

    def children_per_island(self) -> int:
        """Enough generations for selection and migration to matter: about 6 or more."""
        if self.offspring is not None:
            return self.offspring
        return max(1, min(4, math.ceil(self.budget.candidates / (self.islands * 6))))


class HistoryEntry(BaseModel):
    """One line of history.jsonl: a candidate, its verdict, and what selection made of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    order: int
    candidate: Candidate
    verdict: Verdict
    score: float | None = None
    score_measured: bool = False
    origin: str = ""


@dataclass(frozen=True)
class Migration:
    generation: int
    source: int
    target: int
    candidate_id: str

    def describe(self, islands: Sequence[Island]) -> str:
        return (
            f"generation {self.generation}: island {self.target} ({islands[self.target].expert.name}) "
            f"stagnated and received {self.candidate_id} from island {self.source} "
            f"({islands[self.source].expert.name})"
        )


@dataclass(frozen=True)
class SearchResult:
    best: Member | None  # the finalist that passed re-verification
    best_verdict: Verdict | None  # its re-verification verdict
    entries: tuple[HistoryEntry, ...]
    islands: tuple[IslandSummary, ...]
    history: tuple[GenerationPoint, ...]
    failures: dict[str, int]
    evaluated: int
    generations: int
    wall_s: float
    timing_measured: bool
    stop_reason: str
    migrations: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    experience: ExperienceNote = field(default_factory=ExperienceNote)
    tokens_used: int = 0

    @property
    def verified(self) -> bool:
        return self.best is not None


def derive_seed(seed: int, *parts: object) -> int:
    text = ":".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def source_key(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def writer_failure_verdict(candidate: Candidate, kind: FailureKind, message: str) -> Verdict:
    return Verdict(
        candidate_id=candidate.id,
        verified=False,
        policy="",
        device="",
        diagnoses=(Diagnosis(stage=Stage.WRITER, kind=kind, message=message or "the writer produced nothing"),),
    )


def failure_kind_of(candidate: Candidate) -> FailureKind:
    declared = candidate.genes.get(FAILURE_KIND_GENE)
    try:
        return FailureKind(str(declared)) if declared is not None else FailureKind.WRITER_ERROR
    except ValueError:
        return FailureKind.WRITER_ERROR


class Optimizer:
    def __init__(
        self,
        spec: OperatorSpec,
        operator_source: str,
        writers: Sequence[Writer],
        executor: Executor,
        experts: Sequence[ExpertRole],
        config: SearchConfig | None = None,
        sink: ExperienceSink | None = None,
        progress: Progress | None = None,
        tracker: BudgetTracker | None = None,
    ) -> None:
        if not writers:
            raise ValueError("at least one writer")
        self.spec = spec
        self.operator_source = operator_source
        self.writers = list(writers)
        self.executor = executor
        self.config = config or SearchConfig()
        self.sink = sink
        self.progress = progress or NoProgress()
        self.tracker = tracker or BudgetTracker(self.config.budget, meters=self.writers)
        self.expect_timing = bool(executor.timing_available)
        roles = assign_experts(tuple(experts), self.config.islands)
        c = self.config
        self.islands = [
            Island(i, role, c.population_size, c.elite_size, c.tournament_size) for i, role in enumerate(roles)
        ]
        self.rngs = [random.Random(derive_seed(c.seed, "island", i)) for i in range(c.islands)]
        self.entries: list[HistoryEntry] = []
        self.points: list[GenerationPoint] = []
        self.migrations: list[Migration] = []
        self.notes: list[str] = []
        self.members: dict[str, Member] = {}
        self.seen: dict[str, str] = {}  # source hash → id of the candidate first evaluated with it
        self.ids: set[str] = set()
        self.hints: tuple[Hint, ...] = ()
        self.past: tuple[Candidate, ...] = ()
        self.seeded: list[str] = []
        self.generation = 0
        self.retired: dict[str, str] = {}  # writer name → why it cannot express this operator
        self.writer_diagnoses: dict[str, Diagnosis] = {}  # failed proposal id → the writer's diagnosis
        self.lineage_cache: dict[tuple[str, str], tuple[Hint, ...]] = {}

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> SearchResult:
        try:
            self._retrieve()
            stop = self._search()
            best, verdict = self._finalize()
        finally:
            self.progress.close()
        return self._result(best, verdict, stop)

    def _search(self) -> str:
        barren = 0
        if self.past:
            self._seed_from_library()
        while True:
            reason = self.tracker.exhausted()
            if reason:
                return reason
            if not self.active_writers():
                return "no writer can express this operator: " + "; ".join(self.retired.values())
            fresh = self._generation(self.generation)
            barren = 0 if fresh else barren + 1
            self._after_generation(self.generation)
            self.generation += 1
            if barren >= self.config.max_barren:
                return f"the writers proposed nothing new for {barren} generations"

    def _generation(self, generation: int) -> int:
        """Propose, evaluate and record one generation; the number of new candidates evaluated."""
        proposals = self._propose(generation)
        budget_left = self.tracker.remaining
        fresh = proposals[: max(budget_left, 0)]
        to_evaluate = [c for _, c, _ in fresh if c.source.strip()]
        pending = list(fresh)  # recorded in proposal order, each as soon as its verdict is known

        def record_until(done: Candidate | None, verdict: Verdict | None) -> None:
            while pending:
                island, candidate, parent = pending[0]
                if candidate.source.strip() and candidate is not done:
                    return  # waits for its evaluation
                pending.pop(0)
                origin = parent.origin if parent else f"writer:{candidate.writer}"
                if candidate is done and verdict is not None:
                    self._record(island, candidate, verdict, origin, generation)
                    done = None
                else:
                    self._record(island, candidate, self._writer_failure(candidate), origin, generation)

        record_until(None, None)
        # With a wall-time budget, evaluate in waves as wide as the executor, checking the clock
        # between waves, so that one long generation cannot overrun the budget by much.
        wave = max(self.executor.workers, 1) if self.config.budget.wall_s is not None else len(to_evaluate)
        for start in range(0, len(to_evaluate), max(wave, 1)):
            if start and self.tracker.exhausted():
                break
            self.executor.evaluate_all(to_evaluate[start : start + wave], on_done=record_until)
        pending[:] = [p for p in pending if not p[1].source.strip()]  # candidates the clock cut off
        record_until(None, None)
        return len(fresh) - len(to_evaluate) + sum(1 for c in to_evaluate if c.id in self.members)

    def active_writers(self) -> list[Writer]:
        return [w for w in self.writers if w.name not in self.retired]

    def _writer_failure(self, candidate: Candidate) -> Verdict:
        diagnosis = self.writer_diagnoses.get(candidate.id)
        if diagnosis is not None:
            return Verdict(candidate_id=candidate.id, verified=False, policy="", device="", diagnoses=(diagnosis,))
        return writer_failure_verdict(candidate, failure_kind_of(candidate), candidate.notes)

    def _propose(self, generation: int) -> list[tuple[int, Candidate, Member | None]]:
        per_island = self.config.children_per_island()
        batches: list[list[tuple[int, Candidate, Member | None]]] = []
        for island in self.islands:
            writers = self.active_writers()
            if not writers:
                break
            parent = island.select_parent(self.rngs[island.index])
            writer = writers[(island.index + generation) % len(writers)]
            request = ProposalRequest(
                spec=self.spec,
                operator_source=self.operator_source,
                expert=island.expert.name,
                island=island.index,
                generation=generation,
                count=per_island,
                seed=derive_seed(self.config.seed, "propose", island.index, generation),
                parent=parent.candidate if parent else None,
                parent_verdict=parent.verdict if parent else None,
                hints=self._hints_for(parent, island),
                past_kernels=self.past,
            )
            # A writer that costs nothing per proposal is asked for spares, so that children another
            # island already has (deterministic writers often agree) do not leave this island empty.
            if not isinstance(writer, TokenMeter):
                request = request.model_copy(update={"count": per_island * SPARES})
            batch = []
            for child in self._ask(writer, request):
                if len(batch) >= per_island:
                    break
                if child.source.strip():
                    key = source_key(child.source)
                    if key in self.seen:
                        log.debug("%s repeats %s; not evaluated again", child.id, self.seen[key])
                        continue
                normal = self._normalize(child, writer, island, generation, parent)
                if normal.source.strip():
                    self.seen[source_key(normal.source)] = normal.id
                if child.id in self.writer_diagnoses and normal.id != child.id:
                    self.writer_diagnoses[normal.id] = self.writer_diagnoses.pop(child.id)
                batch.append((island.index, normal, parent))
            batches.append(batch)
        # Interleave islands so a budget cut in the middle of a generation is fair to all of them.
        ordered = []
        for j in range(per_island):
            for batch in batches:
                if j < len(batch):
                    ordered.append(batch[j])
        return ordered

    def _ask(self, writer: Writer, request: ProposalRequest) -> list[Candidate]:
        try:
            return list(writer.propose(request))
        except Exception as exc:  # a writer's bug is a failed candidate, never the end of the search
            log.warning("writer %s raised %s: %s", writer.name, type(exc).__name__, exc)
            unsupported = isinstance(exc, (NotImplementedError, UnsupportedOperatorError))
            kind = FailureKind.UNSUPPORTED if unsupported else FailureKind.WRITER_ERROR
            failed = Candidate(
                id=f"{writer.name}-i{request.island}-g{request.generation}-error",
                source="",
                writer=writer.name,
                genes={FAILURE_KIND_GENE: str(kind)},
                notes=f"writer {writer.name} raised {type(exc).__name__}: {exc}",
            )
            carried = getattr(exc, "diagnosis", None)
            if isinstance(carried, Diagnosis):
                self.writer_diagnoses[failed.id] = carried
            if unsupported:  # it will not learn the operator by being asked again
                reason = carried.message if isinstance(carried, Diagnosis) else str(exc)
                self.retired[writer.name] = f"{writer.name}: {reason}"
                self.progress.message(f"writer {writer.name} cannot express this operator: {reason}")
            return [failed]

    def _normalize(
        self, child: Candidate, writer: Writer, island: Island, generation: int, parent: Member | None
    ) -> Candidate:
        update: dict[str, object] = {"island": island.index, "generation": generation, "expert": island.expert.name}
        if child.writer in ("", "manual"):
            update["writer"] = writer.name
        if child.parent_id is None and parent is not None:
            update["parent_id"] = parent.candidate.id
        identifier = child.id or f"{writer.name}-i{island.index}-g{generation}"
        unique, n = identifier, 1
        while unique in self.ids:
            n += 1
            unique = f"{identifier}-{n}"
        self.ids.add(unique)
        update["id"] = unique
        return child.model_copy(update=update)

    def _record(self, island: int, candidate: Candidate, verdict: Verdict, origin: str, generation: int) -> None:
        member = Member.of(candidate, verdict, len(self.entries), origin, self.expect_timing)
        self.members[candidate.id] = member
        self.islands[island].add(member, generation)
        self.tracker.spend()
        self.entries.append(
            HistoryEntry(
                order=member.order,
                candidate=candidate,
                verdict=verdict,
                score=member.score.value if member.score else None,
                score_measured=bool(member.score and member.score.measured),
                origin=origin,
            )
        )
        if self.sink is not None:
            try:
                self.sink.record(self.spec, candidate, verdict)
            except Exception as exc:  # the library is a memory, not a dependency of the search
                log.warning("the experience library could not record %s: %s", candidate.id, exc)
        self.progress.message(self._describe(member))
        self.progress.update(self._state(generation))

    def _describe(self, member: Member) -> str:
        c = member.candidate
        where = f"generation {c.generation} island {c.island} ({c.expert}) {c.id}"
        if member.score is not None:
            return f"{where}: verified, {'speedup' if member.score.measured else 'score'} {member.score.label()}"
        failure = member.verdict.failure
        headline = failure.headline() if failure else "not verified"
        return f"{where}: rejected {headline[:160]}"

    def _after_generation(self, generation: int) -> None:
        for island in self.islands:
            summary = island.summary()
            self.points.append(
                GenerationPoint(
                    generation=generation,
                    island=island.index,
                    evaluated=summary.evaluated,
                    verified=summary.verified,
                    best_speedup=summary.best_speedup,
                    best_score=summary.best_score,
                )
            )
        self._migrate(generation)
        self.progress.update(self._state(generation, done=True))

    def _migrate(self, generation: int) -> None:
        """Islands stagnant for `patience` generations receive the elites of the best other island."""
        for target in self.islands:
            if not target.stagnant(generation + 1, self.config.patience):
                continue
            donors = [i for i in self.islands if i is not target and i.best is not None]
            if not donors:
                continue
            donor = min(donors, key=lambda i: i.best.rank_key() if i.best else (0.0, 0))
            own = target.best.fitness if target.best else None
            moved = 0
            for elite in donor.elites[: self.config.migrants]:
                if own is not None and elite.fitness <= own:
                    continue
                target.receive(elite, generation + 1)
                self.migrations.append(Migration(generation, donor.index, target.index, elite.candidate.id))
                self.progress.message(self.migrations[-1].describe(self.islands))
                moved += 1
            if not moved:
                target.last_improvement = generation + 1  # nothing better to give: wait another round

    # -- experience -----------------------------------------------------------------------------

    def _retrieve(self) -> None:
        if self.sink is None or self.config.retrieve == 0:
            return
        try:
            hints, past = self.sink.retrieve(self.spec, self.config.retrieve)
        except Exception as exc:
            log.warning("the experience library could not be read: %s", exc)
            return
        self.hints = tuple(hints)
        self.past = tuple(past)

    def _hints_for(self, parent: Member | None, island: Island) -> tuple[Hint, ...]:
        """The run's retrieved hints, plus those the library has for the parent's diagnosis."""
        sink = self.sink
        if parent is None or self.config.lineage_hints == 0 or not isinstance(sink, LineageHints):
            return self.hints
        key = (parent.candidate.id, island.expert.name)
        if key not in self.lineage_cache:
            try:
                found = tuple(sink.hints_for_verdict(parent.verdict, self.config.lineage_hints, island.expert.name))
            except Exception as exc:
                log.warning("the experience library has no hints for %s: %s", parent.candidate.id, exc)
                found = ()
            self.lineage_cache[key] = found
        known = {h.id for h in self.hints}
        return self.hints + tuple(h for h in self.lineage_cache[key] if h.id not in known)

    def _seed_from_library(self) -> None:
        """Past kernels for this operator signature are re-verified here: they seed generation 0."""
        seeds: list[tuple[int, Candidate]] = []
        limit = min(self.tracker.remaining, max(1, int(self.config.budget.candidates * self.config.library_share)))
        for past in self.past:
            if len(seeds) >= limit:
                break
            if not past.source.strip() or source_key(past.source) in self.seen:
                continue
            n = len(seeds)
            island = self.islands[n % len(self.islands)]
            identifier = past.id if past.id and past.id not in self.ids else f"library-{n}-{past.id}"
            self.ids.add(identifier)
            self.seen[source_key(past.source)] = identifier
            seeds.append(
                (
                    island.index,
                    past.model_copy(
                        update={
                            "id": identifier,
                            "island": island.index,
                            "generation": 0,
                            "expert": island.expert.name,
                            "parent_id": None,
                        }
                    ),
                )
            )
        verdicts = self.executor.evaluate_all([c for _, c in seeds])
        for (island, candidate), verdict in zip(seeds, verdicts, strict=True):
            self.seeded.append(candidate.id)
            self._record(island, candidate, verdict, "library", 0)

    # -- the result -----------------------------------------------------------------------------

    def _finalize(self) -> tuple[Member | None, Verdict | None]:
        verified = sorted((m for m in self.members.values() if m.verified), key=Member.rank_key)
        for member in verified[: self.config.finalists]:
            self.progress.message(f"re-verifying {member.candidate.id} with new seeds")
            verdict = self.executor.reverify(member.candidate)
            if verdict.verified:
                return member, verdict
            failure = verdict.failure.headline() if verdict.failure else "not verified"
            self.notes.append(f"finalist {member.candidate.id} failed re-verification: {failure}")
            self.progress.message(self.notes[-1])
        return None, None

    def _state(self, generation: int, done: bool = False) -> ProgressState:
        return ProgressState(
            generation=generation,
            evaluated=self.tracker.evaluated,
            budget=self.config.budget.candidates,
            elapsed_s=self.tracker.elapsed_s,
            measured=self.expect_timing,
            islands=tuple(i.summary() for i in self.islands),
            generation_done=done,
        )

    def _result(self, best: Member | None, verdict: Verdict | None, stop: str) -> SearchResult:
        failures: Counter[str] = Counter()
        for island in self.islands:
            failures.update(island.failures)
        notes = [f"search stopped: {stop}"]
        if not self.expect_timing:
            notes.append(
                "timing was not measured (no GPU): verified candidates were ranked by a static cost model "
                "from compile facts and genes, not by speed"
            )
        notes += self.notes
        if verdict is not None and verdict.timing is not None:
            notes += list(verdict.timing.baseline_notes)
        if self.migrations:
            notes.append(f"{len(self.migrations)} migration(s) of elites into stagnant islands")
        helped = None if best is None or not self.seeded else best.origin == "library"
        experience = ExperienceNote(
            retrieved_hints=tuple(h.id for h in self.hints),
            retrieved_kernels=tuple(self.seeded),
            helped=helped,
            summary=(
                f"{len(self.hints)} hint(s) and {len(self.seeded)} past kernel(s) retrieved"
                if self.sink is not None
                else "no experience library"
            ),
        )
        return SearchResult(
            best=best,
            best_verdict=verdict,
            entries=tuple(self.entries),
            islands=tuple(i.summary() for i in self.islands),
            history=tuple(self.points),
            failures=dict(sorted(failures.items())),
            evaluated=self.tracker.evaluated,
            generations=self.generation,
            wall_s=self.tracker.elapsed_s,
            timing_measured=bool(verdict and verdict.timing and verdict.timing.measured),
            stop_reason=stop,
            migrations=tuple(m.describe(self.islands) for m in self.migrations[:MIGRATIONS_LISTED]),
            notes=tuple(notes),
            experience=experience,
            tokens_used=self.tracker.tokens_used,
        )
