"""`foundry check`'s verdict on the terminal: the count of compared input sets says how it relates to the
verdict's correctness trials (it printed "3" in the JSON beside "4 trials within tolerance")."""

from foundry.commands.check import render_verdict
from foundry.core.records import Verdict


def test_check_names_what_each_trial_count_counts() -> None:
    verdict = Verdict(
        candidate_id="c1",
        verified=True,
        policy="strict",
        device="cpu (Triton interpreter)",
        trials=3,
        checks_passed=("output types", "4 trials within tolerance", "trivial-answer probes"),
    )
    text = render_verdict(verdict)
    assert "✓ 4 input sets within tolerance: the 3 correctness trials and 1 shape variant or transformed input" in text
    assert "4 trials within tolerance" not in text
    assert "✓ output types" in text and "✓ trivial-answer probes" in text
