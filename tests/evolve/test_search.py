"""The search loop with fixed seeds: determinism, budget, selection, migration, re-verification."""

from __future__ import annotations

import pytest
from evolve_doubles import (
    SPEC,
    ConstantWriter,
    FakeClock,
    GeneEvaluator,
    GeneWriter,
    MeteredWriter,
    RaisingWriter,
    genes_of,
)
from foundry.core.errors import UnsupportedOperatorError
from foundry.core.protocols import ProposalRequest
from foundry.core.records import Diagnosis, FailureKind, Stage, Verdict
from foundry.evolve import Budget, BudgetTracker, LocalExecutor, Optimizer, SearchConfig, load_experts


def optimizer(writers, evaluator, slots=1, finalist=None, tracker=None, **config) -> Optimizer:
    cfg = SearchConfig(**config)
    executor = LocalExecutor([evaluator], slots_per_evaluator=slots, finalist_evaluator=finalist)
    return Optimizer(SPEC, "class Model: ...", writers, executor, load_experts(), cfg, tracker=tracker)


def trace(result) -> list[tuple[str, int, str | None, float | None]]:
    return [(e.candidate.id, e.candidate.island, e.candidate.parent_id, e.score) for e in result.entries]


def test_same_seed_same_search_and_other_seed_other_search():
    runs = [
        optimizer([GeneWriter()], GeneEvaluator(), budget=Budget(candidates=24), seed=seed).run() for seed in (7, 7, 8)
    ]
    assert trace(runs[0]) == trace(runs[1])
    assert trace(runs[0]) != trace(runs[2])
    assert runs[0].best is not None and runs[0].best.candidate.id == runs[1].best.candidate.id


def test_candidate_budget_is_exact_and_islands_share_it():
    result = optimizer([GeneWriter()], GeneEvaluator(), budget=Budget(candidates=10), islands=4, seed=1).run()
    assert result.evaluated == len(result.entries) == 10
    assert "candidate budget of 10 spent" in result.stop_reason
    per_island = [s.evaluated for s in result.islands]
    assert sum(per_island) == 10 and max(per_island) - min(per_island) <= 1
    assert [s.expert for s in result.islands] == ["fusion", "memory_access", "tiling_launch", "compute_restructuring"]


def test_wall_time_budget_stops_the_search():
    clock = FakeClock(step=1.0)
    budget = Budget(candidates=1000, wall_s=30)
    tracker = BudgetTracker(budget, clock=clock)
    result = optimizer([GeneWriter()], GeneEvaluator(), budget=budget, tracker=tracker, seed=1).run()
    assert "wall-time budget of 30 s spent" in result.stop_reason
    assert 0 < result.evaluated < 1000


def test_token_budget_stops_the_search():
    writer = MeteredWriter(per_call=100)
    budget = Budget(candidates=1000, tokens=1000)
    result = optimizer([writer], GeneEvaluator(), budget=budget, seed=1, islands=2, offspring=1).run()
    assert "LLM token budget of 1000 spent" in result.stop_reason
    assert writer.tokens_used == 1000  # 10 proposals, checked before every generation
    assert result.tokens_used == 1000
    assert result.evaluated == 10


def test_children_carry_their_parent_and_its_diagnosis():
    writer = GeneWriter()
    result = optimizer([writer], GeneEvaluator(), budget=Budget(candidates=16), seed=3).run()
    later = [r for r in writer.requests if r.generation > 0]
    assert later and all(r.parent is not None and r.parent_verdict is not None for r in later)
    for request in later:
        assert request.parent_verdict.candidate_id == request.parent.id
        assert request.parent.island == request.island or request.parent.id in {
            m for m in " ".join(result.migrations).split()
        }
    by_id = {e.candidate.id: e for e in result.entries}
    for entry in result.entries:
        if entry.candidate.generation > 0:
            assert entry.candidate.parent_id in by_id


def test_a_failed_parent_is_repaired_when_nothing_is_verified_yet():
    # x starts at 1 and the evaluator rejects everything in generation 0: the island keeps the most
    # advanced failure as parent and the writer gets its diagnosis.
    seen = set()

    def reject_first(genes):
        key = (genes["island"], genes["x"])
        if key not in seen:
            seen.add(key)
            return FailureKind.MISMATCH
        return None

    writer = GeneWriter()
    optimizer([writer], GeneEvaluator(reject=reject_first), budget=Budget(candidates=8), islands=2, seed=5).run()
    repairs = [r for r in writer.requests if r.parent_verdict is not None and not r.parent_verdict.verified]
    assert repairs
    assert repairs[0].parent_verdict.failure.kind == FailureKind.MISMATCH


def test_stagnant_island_receives_elites_of_the_best_island():
    # Island 1 never gets anything verified; island 0 does. After `patience` generations island 1
    # receives island 0's best, and its next children descend from the migrant.
    def reject_island_one(genes):
        return FailureKind.COMPILE_ERROR if genes["island"] == 1 and genes["x"] < 50 else None

    writer = GeneWriter()
    result = optimizer(
        [writer],
        GeneEvaluator(reject=reject_island_one),
        budget=Budget(candidates=20),
        islands=2,
        patience=2,
        seed=11,
    ).run()
    assert result.migrations
    assert "island 1 (memory_access) stagnated and received" in result.migrations[0]
    assert "from island 0 (fusion)" in result.migrations[0]
    migrated_id = result.migrations[0].split("received ")[1].split(" ")[0]
    children = [r for r in writer.requests if r.island == 1 and r.parent is not None and r.parent.id == migrated_id]
    assert children, "the stagnant island must breed from the migrant"
    # The migrant's children are made in island 1 with genes of island 0's lineage.
    adopted = [e for e in result.entries if e.candidate.island == 1 and e.candidate.parent_id == migrated_id]
    assert adopted and all(genes_of(e.candidate.source)["island"] == 1 for e in adopted)


def test_no_migration_when_no_island_improves():
    result = optimizer(
        [GeneWriter()],
        GeneEvaluator(reject=lambda g: FailureKind.RUNTIME_ERROR),
        budget=Budget(candidates=16),
        islands=2,
        patience=1,
        seed=2,
    ).run()
    assert result.migrations == ()
    assert result.best is None and not result.verified
    assert result.failures == {"runtime_error": 16}
    assert all(s.failures == {"runtime_error": 8} for s in result.islands)


def test_best_is_fastest_verified_across_islands_and_reverified():
    finalist = GeneEvaluator()
    result = optimizer([GeneWriter()], GeneEvaluator(), finalist=finalist, budget=Budget(candidates=20), seed=4).run()
    verified = [e for e in result.entries if e.verdict.verified]
    top = max(verified, key=lambda e: (e.score, -e.order))
    assert result.best.candidate.id == top.candidate.id
    assert finalist.calls == [top.candidate.id]
    assert result.best_verdict.verified and result.timing_measured
    assert result.best.score.value == pytest.approx(genes_of(top.candidate.source)["x"] / 2)


def test_a_finalist_that_fails_reverification_gives_way_to_the_next():
    first: list[str] = []

    def flaky(genes):
        return None

    class Flaky(GeneEvaluator):
        def evaluate(self, candidate):
            verdict = super().evaluate(candidate)
            if not first:
                first.append(candidate.id)
                return Verdict(
                    candidate_id=candidate.id,
                    verified=False,
                    policy="strict",
                    device="toy",
                    diagnoses=(
                        GeneEvaluator(reject=lambda g: FailureKind.STATE_DEPENDENT).evaluate(candidate).failure,
                    ),
                )
            return verdict

    finalist = Flaky()
    result = optimizer([GeneWriter()], GeneEvaluator(), finalist=finalist, budget=Budget(candidates=12), seed=4).run()
    assert len(finalist.calls) == 2
    assert result.best.candidate.id == finalist.calls[1] != first[0]
    assert any(f"finalist {first[0]} failed re-verification" in n for n in result.notes)


def test_writer_exceptions_become_writer_errors_and_the_search_goes_on():
    result = optimizer([RaisingWriter(), GeneWriter()], GeneEvaluator(), budget=Budget(candidates=12), seed=1).run()
    errors = [e for e in result.entries if e.verdict.failure and e.verdict.failure.kind == FailureKind.WRITER_ERROR]
    assert errors and all("the writer broke" in e.verdict.failure.message for e in errors)
    assert any(e.verdict.verified for e in result.entries)
    assert result.evaluated == 12


def test_duplicates_are_not_evaluated_again_and_a_barren_search_stops():
    evaluator = GeneEvaluator()
    result = optimizer([ConstantWriter()], evaluator, budget=Budget(candidates=50), seed=1, max_barren=2).run()
    assert evaluator.calls[:1] == ["same"] and len(evaluator.calls) == 2  # once, then the re-verification
    assert result.evaluated == 1
    assert "proposed nothing new" in result.stop_reason


def test_without_timing_the_static_model_ranks_and_the_report_says_so():
    result = optimizer([GeneWriter()], GeneEvaluator(measured=False), budget=Budget(candidates=8), seed=1).run()
    assert result.best is not None and not result.timing_measured
    assert result.best.score is not None and not result.best.score.measured
    assert all(s.best_speedup is None for s in result.islands)
    assert any("timing was not measured" in n for n in result.notes)


def test_parallel_cpu_evaluation_keeps_proposal_order():
    evaluator = GeneEvaluator(measured=False, delay_s=0.05)
    serial = optimizer([GeneWriter()], GeneEvaluator(measured=False), budget=Budget(candidates=12), seed=9).run()
    parallel = optimizer([GeneWriter()], evaluator, slots=3, budget=Budget(candidates=12), seed=9).run()
    assert evaluator.max_active >= 2
    assert trace(parallel) == trace(serial)


def test_a_gpu_evaluator_never_times_two_candidates_at_once():
    evaluator = GeneEvaluator(measured=True, delay_s=0.02)
    optimizer([GeneWriter()], evaluator, slots=4, budget=Budget(candidates=12), seed=9).run()
    assert evaluator.max_active == 1


def test_one_timing_worker_per_gpu():
    gpus = [GeneEvaluator(measured=True, delay_s=0.05) for _ in range(2)]
    executor = LocalExecutor(gpus, slots_per_evaluator=4)
    assert executor.workers == 2
    opt = Optimizer(SPEC, "", [GeneWriter()], executor, load_experts(), SearchConfig(budget=Budget(candidates=8)))
    opt.run()
    assert all(g.max_active == 1 for g in gpus)
    assert all(g.calls for g in gpus)


def test_a_gpu_evaluator_takes_as_many_candidates_as_its_concurrency():
    """The evaluator's own device lock keeps timing runs apart; the executor may hand it several."""
    gpus = [GeneEvaluator(measured=True, delay_s=0.05) for _ in range(2)]
    gpus[0].concurrency = 3
    executor = LocalExecutor(gpus, slots_per_evaluator=8)
    assert executor.workers == 4  # 3 + 1: CPU slots do not apply to a timing evaluator
    opt = Optimizer(SPEC, "", [GeneWriter()], executor, load_experts(), SearchConfig(budget=Budget(candidates=12)))
    opt.run()
    assert gpus[0].max_active >= 2 and gpus[1].max_active == 1


class NoTemplate(UnsupportedOperatorError):
    """Shaped like the template writer's: it carries the writer's diagnosis. The loop knows it by its type,
    not by its name."""

    def __init__(self) -> None:
        super().__init__("aten.fft_rfft: no template")
        self.diagnosis = Diagnosis(stage=Stage.WRITER, kind=FailureKind.UNSUPPORTED, message="fft_rfft: no template")


class UnsupportedWriter:
    name = "unsupported"

    def __init__(self, error: type[Exception] = NoTemplate) -> None:
        self.calls = 0
        self.error = error

    def propose(self, request):
        self.calls += 1
        raise self.error()


def test_a_writer_that_cannot_express_the_operator_is_retired():
    lone = UnsupportedWriter()
    result = optimizer([lone], GeneEvaluator(), budget=Budget(candidates=20), seed=1).run()
    assert lone.calls == 1 and result.evaluated == 1
    assert result.entries[0].verdict.failure.message == "fft_rfft: no template"
    assert result.failures == {"unsupported": 1}
    assert "no writer can express this operator: unsupported: fft_rfft: no template" in result.stop_reason
    # with another writer beside it, the search goes on without it
    other = UnsupportedWriter()
    mixed = optimizer([other, GeneWriter()], GeneEvaluator(), budget=Budget(candidates=12), seed=1).run()
    assert other.calls == 1 and mixed.evaluated == 12 and mixed.verified


def test_only_the_unsupported_type_retires_a_writer_not_a_name():
    class UnsupportedLookingBug(Exception):  # a writer's bug whose name happens to start with "Unsupported"
        pass

    buggy = UnsupportedWriter(UnsupportedLookingBug)
    result = optimizer([buggy], GeneEvaluator(), budget=Budget(candidates=3), seed=1).run()
    assert buggy.calls > 1  # not retired: asked again, as a bug may not recur
    assert result.failures == {"writer_error": result.evaluated} and "no writer can express" not in result.stop_reason


def test_an_evaluator_exception_is_retried_once_then_becomes_a_verdict():
    class Shaky(GeneEvaluator):
        def __init__(self, failures: int) -> None:
            super().__init__()
            self.failures = failures

        def evaluate(self, candidate):
            if self.failures:
                self.failures -= 1
                raise SystemError("AST constructor recursion depth mismatch")
            return super().evaluate(candidate)

    once = LocalExecutor([Shaky(failures=1)])
    [candidate] = GeneWriter().propose(
        ProposalRequest(spec=SPEC, operator_source="", expert="fusion", island=0, generation=0, seed=3)
    )
    assert once.evaluate_all([candidate])[0].verified
    twice = LocalExecutor([Shaky(failures=2)])
    verdict = twice.evaluate_all([candidate])[0]
    assert not verdict.verified and verdict.failure.rule == "evaluator_error"
    assert "SystemError" in verdict.failure.message


def test_the_wall_clock_is_checked_between_waves_inside_a_generation():
    now = [0.0]

    class Slow(GeneEvaluator):
        def evaluate(self, candidate):
            now[0] += 10.0  # every evaluation takes ten seconds of the fake clock
            return super().evaluate(candidate)

    budget = Budget(candidates=100, wall_s=25)
    tracker = BudgetTracker(budget, clock=lambda: now[0])
    result = optimizer([GeneWriter()], Slow(), budget=budget, tracker=tracker, offspring=4, seed=3).run()
    assert result.generations == 1  # a single generation of 16 proposals
    assert result.evaluated == 3  # 0 s, 10 s, 20 s: started; at 30 s the budget is spent
    assert "wall-time budget of 25 s spent" in result.stop_reason


class Library:
    """An ExperienceSink holding past kernels and hints, recording what the search reports."""

    def __init__(self, past):
        self.past = past
        self.recorded: list[str] = []

    def retrieve(self, spec, k):
        from foundry.core.protocols import Hint

        return (Hint(id="h1", suggestion="try wider blocks", genes={"x": 9}),), self.past[:k]

    def record(self, spec, candidate, verdict):
        self.recorded.append(candidate.id)


def test_past_kernels_seed_generation_zero_within_a_share_of_the_budget():
    from evolve_doubles import gene_source
    from foundry.core.records import Candidate

    past = [Candidate(id=f"lib-{n}", source=gene_source({"x": 10 + n, "island": 0})) for n in range(5)]
    past.append(Candidate(id="lib-dup", source=past[0].source))
    library = Library(past)
    writer = GeneWriter()
    cfg = SearchConfig(budget=Budget(candidates=8), seed=1, retrieve=6)
    opt = Optimizer(SPEC, "", [writer], LocalExecutor([GeneEvaluator()]), load_experts(), cfg, sink=library)
    result = opt.run()
    assert result.experience.retrieved_kernels == ("lib-0", "lib-1")  # a quarter of a budget of 8
    assert result.experience.retrieved_hints == ("h1",)
    assert [e.origin for e in result.entries[:2]] == ["library", "library"]
    assert all(r.hints and r.past_kernels for r in writer.requests)
    assert library.recorded == [e.candidate.id for e in result.entries]
    assert result.evaluated == 8
    # the library kernels are the fastest here (x = 10, 11): the best lineage started from them
    assert result.best.origin == "library" and result.experience.helped


class LineageLibrary(Library):
    def __init__(self):
        super().__init__([])
        self.asked: list[tuple[str, str]] = []

    def hints_for_verdict(self, verdict, k, expert):
        from foundry.core.protocols import Hint

        self.asked.append((verdict.candidate_id, expert))
        kind = verdict.failure.kind if verdict.failure else "verified"
        return [Hint(id=f"for-{kind}", suggestion=f"what helps after {kind}")][:k]


def test_a_parents_diagnosis_brings_its_own_hints_from_the_library():
    library = LineageLibrary()
    writer = GeneWriter()
    cfg = SearchConfig(budget=Budget(candidates=12), seed=3, islands=2)
    Optimizer(SPEC, "", [writer], LocalExecutor([GeneEvaluator()]), load_experts(), cfg, sink=library).run()
    with_parent = [r for r in writer.requests if r.parent is not None]
    assert with_parent
    for request in with_parent:
        ids = [h.id for h in request.hints]
        expected = "for-verified" if request.parent_verdict.verified else f"for-{request.parent_verdict.failure.kind}"
        assert ids == ["h1", expected]
    assert len(library.asked) == len(set(library.asked))  # asked once per parent and expert
    assert [h.id for h in writer.requests[0].hints] == ["h1"]  # no parent yet: the run's hints only
