"""A finalist's re-verification on a GPU: several runs, each of which must verify, and one verdict whose
times are the runs' medians (the evaluator's own evaluate() is scripted here; the runs on the H200 are in
benchmarks/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from foundry.core.records import Diagnosis, FailureKind, Roofline, Stage, Timing, Verdict
from foundry.evaluate import evaluator as evaluator_module
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig, median_run
from foundry.report.build import runs_sentence
from foundry.spec.loader import load_operator

OPERATOR = Path(__file__).resolve().parents[1] / "cheats" / "operators" / "softmax_rows.py"


def timed(cand: float, eager: float, compiled: float | None, wall: float = 1.0) -> Verdict:
    roofline = Roofline(
        bytes_moved=1 << 28,
        flops=0,
        floor_ms=0.06,
        pct_of_floor=0.06 / cand * 100,
        bound="memory",
        bandwidth_gbs=4257,
        peak_tflops=60,
    )
    timing = Timing(
        measured=True,
        device="NVIDIA H200",
        trials=200,
        candidate_ms=cand,
        eager_ms=eager,
        compile_ms=compiled,
        roofline=roofline,
    )
    return Verdict(candidate_id="c", verified=True, policy="strict", device="cuda", timing=timing, wall_s=wall)


def test_the_median_run_gives_the_time_and_the_baselines_are_their_own_medians():
    runs = [timed(0.0819, 0.33, 0.13, 2.0), timed(0.1223, 0.32, None, 3.0), timed(0.0820, 0.34, 0.15, 4.0)]
    verdict = median_run(runs)
    timing = verdict.timing
    assert timing is not None
    assert timing.candidate_ms == 0.0820  # the middle of 0.0819, 0.0820, 0.1223: the third run's
    assert timing.roofline == runs[2].timing.roofline  # that run's roofline, measured at that time
    assert timing.eager_ms == pytest.approx(0.33)
    assert timing.compile_ms == pytest.approx(0.14)  # the median of the runs where compile ran
    assert [r.candidate_ms for r in timing.runs] == [0.0819, 0.1223, 0.0820]
    assert [r.compile_ms for r in timing.runs] == [0.13, None, 0.15]
    assert verdict.wall_s == pytest.approx(9.0)
    assert timing.speedup_eager == pytest.approx(0.33 / 0.0820)
    assert "Foundry 0.0819 / 0.1223 / 0.0820 ms" in runs_sentence(timing)
    assert "torch.compile 0.1300 / — / 0.1500 ms" in runs_sentence(timing)


def test_one_run_or_runs_without_times_are_left_as_they_are():
    one = timed(0.1, 0.3, 0.2)
    assert median_run([one]) is one
    untimed = Verdict(candidate_id="c", verified=True, policy="strict", device="cpu")
    assert median_run([untimed, one]) is untimed


def scripted(monkeypatch, verdicts: list[Verdict], gpu: bool = True) -> tuple[CandidateEvaluator, list]:
    search = CandidateEvaluator(load_operator(str(OPERATOR)), config=EvaluatorConfig(), device="cpu")
    search.reference_timing = "the search's"  # type: ignore[assignment]
    seen: list[tuple] = []
    script = iter(verdicts)

    def evaluate(self, candidate):
        seen.append((self is search, self.reference_timing, self.trials, self.config.timing_trials))
        return next(script)

    monkeypatch.setattr(CandidateEvaluator, "evaluate", evaluate)
    monkeypatch.setattr(CandidateEvaluator, "timing_available", property(lambda self: gpu))
    return search, seen


def test_a_finalist_is_timed_in_three_runs_the_later_ones_timing_the_reference_again(monkeypatch):
    search, seen = scripted(monkeypatch, [timed(0.2, 0.3, 0.25), timed(0.1, 0.3, 0.25), timed(0.15, 0.3, 0.25)])
    verdict = search.reverify(None)  # type: ignore[arg-type]
    assert evaluator_module.REVERIFY_RUNS == 3 and len(seen) == 3
    assert all(not own for own, *_ in seen)  # copies: the search's evaluator is unchanged
    assert [ref for _, ref, _, _ in seen] == ["the search's", None, None]
    assert all(t == search.trials * 2 and n >= 200 for _, _, t, n in seen)
    assert search.reference_timing == "the search's"
    assert verdict.timing is not None and verdict.timing.candidate_ms == 0.15
    assert len(verdict.timing.runs) == 3


def test_a_run_that_fails_is_the_verdict(monkeypatch):
    failed = Verdict(
        candidate_id="c",
        verified=False,
        policy="strict",
        device="cuda",
        diagnoses=[
            Diagnosis(stage=Stage.CORRECTNESS, kind=FailureKind.MISMATCH, rule="allclose", message="trial 3 differs")
        ],
    )
    search, seen = scripted(monkeypatch, [timed(0.2, 0.3, 0.25), failed, timed(0.1, 0.3, 0.25)])
    assert search.reverify(None) is failed  # type: ignore[arg-type]
    assert len(seen) == 2  # no third run after a failure


def test_without_a_gpu_one_run(monkeypatch):
    only = Verdict(candidate_id="c", verified=True, policy="strict", device="cpu")
    search, seen = scripted(monkeypatch, [only], gpu=False)
    assert search.reverify(None) is only  # type: ignore[arg-type]
    assert len(seen) == 1


def test_the_bench_row_lists_the_runs_beside_the_median():
    from foundry.commands.bench import render_operator, row_from

    verdict = median_run([timed(0.0819, 0.33, 0.13), timed(0.1223, 0.32, 0.14), timed(0.0820, 0.34, 0.15)])
    row = row_from("ops/groupnorm.py::Model", "search", verdict, 40, 60.0)
    assert row.foundry_ms == 0.0820 and row.runs_ms == (0.0819, 0.1223, 0.0820)
    assert row.compile_ms == pytest.approx(0.14)
    assert "foundry timed in 3 runs: 0.0819 / 0.1223 / 0.0820 ms; the median above" in render_operator(row)


def test_a_kernel_quicker_than_its_launch_says_so_in_the_bench():
    from foundry.commands.bench import render_operator, row_from

    verdict = timed(0.0820, 0.33, 0.13)
    slow_host = verdict.model_copy(update={"timing": verdict.timing.model_copy(update={"host_ms": 0.12})})
    row = row_from("ops/groupnorm.py::Model", "search", slow_host, 40, 60.0)
    assert row.host_ms == 0.12
    assert "the host takes 0.1200 ms to launch one call" in render_operator(row)
    quick_host = verdict.model_copy(update={"timing": verdict.timing.model_copy(update={"host_ms": 0.01})})
    assert "the host takes" not in render_operator(row_from("op", "search", quick_host, 40, 60.0))
