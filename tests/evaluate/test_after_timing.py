"""The re-check after a timing run (GPU only in a search; the judging itself is plain tensor code): the
outputs of the trials the worker was asked to call again must all come back, and still be right."""

from __future__ import annotations

from pathlib import Path

import torch
from foundry.core.records import FailureKind, Stage, Verdict
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

OPERATOR = Path(__file__).resolve().parents[1] / "cheats" / "operators" / "softmax_rows.py"


def evaluator(**config) -> CandidateEvaluator:
    return CandidateEvaluator(load_operator(str(OPERATOR)), config=EvaluatorConfig(**config), device="cpu")


def test_right_outputs_after_timing_pass():
    ref = torch.randn(4, 8).softmax(-1)
    assert evaluator().check_after_timing([[ref.clone()]], [[ref]]) is None


def test_drifted_outputs_after_timing_are_state_dependent():
    ref = torch.randn(4, 8).softmax(-1)
    diag = evaluator().check_after_timing([[ref + 0.01]], [[ref]])
    assert diag is not None
    assert (diag.stage, diag.kind, diag.rule) == (Stage.TIMING, FailureKind.STATE_DEPENDENT, "state:after_timing")
    assert "after many calls" in diag.message


def test_missing_outputs_after_timing_are_not_a_pass():
    ref = torch.randn(4, 8).softmax(-1)
    diag = evaluator().check_after_timing([], [[ref]])  # nothing compared would otherwise pass
    assert diag is not None and diag.rule == "state:after_timing" and "0 trial(s)" in diag.message
    assert evaluator().check_after_timing([None], [[ref]]) is not None


def test_a_search_rechecks_one_trial_the_final_check_all(monkeypatch):
    search = evaluator()
    assert search.trials > 1 and search.after_trials == 1
    final = []

    def evaluate(self, candidate):
        final.append(self)
        return Verdict(candidate_id="c", verified=True, policy="strict", device="cpu")

    monkeypatch.setattr(CandidateEvaluator, "evaluate", evaluate)
    search.reverify(None)  # type: ignore[arg-type]
    (checker,) = final
    assert checker is not search and checker.trials == search.trials * 2
    assert checker.after_trials == checker.trials
    assert search.after_trials == 1  # the search's own evaluator is unchanged
