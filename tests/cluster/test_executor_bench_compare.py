"""The executor benchmark's agreement check (tools/executor_bench.py compare())."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("executor_bench", ROOT / "tools/executor_bench.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def row(verdicts: list[list], timed: bool) -> dict:
    return {"verdicts": verdicts, "timed": timed}


def test_identical_searches_agree():
    same = [["a", True], ["b", False]]
    agree, line = bench.compare([row(same, False), row(same, False)])
    assert agree and "differing verdicts: 0" in line and "same candidates in the same order" in line


def test_a_differing_verdict_on_a_shared_candidate_disagrees_even_when_timed():
    agree, line = bench.compare([row([["a", True], ["b", True]], True), row([["a", True], ["b", False]], True)])
    assert not agree and "differing verdicts: 1 (b)" in line


def test_timed_searches_may_diverge_after_selection_but_untimed_ones_may_not():
    local, ray = [["a", True], ["b", True], ["c", True]], [["a", True], ["b", True], ["d", False]]
    agree, line = bench.compare([row(local, True), row(ray, True)])
    assert agree and "2 evaluated by only some executors" in line and "measured speedups" in line
    agree, line = bench.compare([row(local, False), row(ray, False)])
    assert not agree and "measured speedups" not in line
