"""`foundry bench` arithmetic and rendering: targets, aggregate, per-operator blocks."""

from __future__ import annotations

import pytest
from foundry.commands.bench import (
    BenchReport,
    aggregate,
    render_operator,
    render_table,
    row_from,
    split_target,
)
from foundry.core.records import Diagnosis, FailureKind, Roofline, Stage, Timing, Verdict


def report(rows, **over) -> BenchReport:
    """A bench report of these rows on one setup; `over` changes any field."""
    fields = dict(
        date="2026-12-02T10:00:00+00:00",
        device="NVIDIA H200",
        torch_version="2.11.0",
        triton_version="3.6.0",
        python_version="3.12.0",
        policy="strict",
        writer="template",
        budget=6,
        rows=tuple(rows),
        aggregate=aggregate(list(rows)),
    )
    return BenchReport(**(fields | over))


def timed(cid: str, cand: float, eager: float, compiled: float) -> Verdict:
    roofline = Roofline(
        bytes_moved=1 << 28,
        flops=0,
        floor_ms=cand * 0.9,
        pct_of_floor=90.0,
        bound="memory",
        bandwidth_gbs=4000,
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
    return Verdict(candidate_id=cid, verified=True, policy="strict", device="cuda", timing=timing)


def test_targets_name_an_optional_kernel():
    assert split_target("ops/a.py") == ("ops/a.py", None)
    assert split_target("ops/a.py::Net=out/kernel.py")[0] == "ops/a.py::Net"
    assert str(split_target("ops/a.py=out/kernel.py")[1]) == "out/kernel.py"
    assert split_target("ops/a.py=notes.txt") == ("ops/a.py=notes.txt", None)  # only a .py file is a kernel


def test_aggregate_geometric_means_and_shares_over_all_operators():
    rows = [
        row_from("a", "search", timed("a", 1.0, 2.0, 1.5), 10, 60.0),  # 2.0x eager, 1.5x compile
        row_from("b", "search", timed("b", 1.0, 0.5, 0.8), 10, 60.0),  # 0.5x eager, 0.8x compile
        row_from("c", "search", None, 10, 60.0),  # nothing verified
    ]
    agg = aggregate(rows)
    assert agg.operators == 3 and agg.verified == 2 and agg.measured == 2
    assert agg.geomean_speedup_eager == pytest.approx(1.0)
    assert agg.geomean_speedup_compile == pytest.approx((1.5 * 0.8) ** 0.5)
    assert agg.share_faster_than_eager == pytest.approx(1 / 3)
    assert agg.share_faster_than_compile == pytest.approx(1 / 3)
    assert rows[0].candidates_per_minute == 10.0 and rows[0].pct_of_roofline == 90.0


def test_rendering_side_by_side_and_what_was_not_timed():
    good = row_from("ops/a.py::Model", "search", timed("a", 0.5, 1.0, 0.6), 12, 30.0)
    failed = Verdict(
        candidate_id="k",
        verified=False,
        policy="strict",
        device="cuda",
        diagnoses=(Diagnosis(stage=Stage.CORRECTNESS, kind=FailureKind.MISMATCH, message="off"),),
    )
    bad = row_from("ops/b.py::Model", "kernel.py", failed, 1, 5.0)
    block = render_operator(good)
    assert "eager" in block and "1.0000 ms" in block and "2.00x vs eager" in block and "1.67x vs eager" in block
    assert "90% of roofline, memory-bound" in block
    assert "not timed: no verified kernel" in render_operator(bad)
    assert "[correctness/mismatch] off" in render_operator(bad)
    table = render_table(report([good, bad], budget=12))
    assert "ops/a.py::Model | yes | 1.0000 ms | 0.6000 ms | 0.5000 ms | 2.00x | 1.20x" in table
    assert "geometric mean: 2.00x over eager, 1.20x over torch.compile" in table
    assert "faster than eager on 50%, than torch.compile on 50% of operators" in table


def test_a_hybrid_kernel_that_keeps_library_ops_says_so():
    verdict = timed("h", 0.5, 1.0, 0.6).model_copy(update={"library_ops": ("convolution",)})
    hybrid = row_from("ops/c.py::Model", "search", verdict, 4, 30.0)
    assert hybrid.library_ops == ("convolution",)
    assert "verified with library convolution;" in render_operator(hybrid)
    table = render_table(report([hybrid], policy="hybrid"))
    assert "ops/c.py::Model | yes (library: convolution) | 1.0000 ms" in table
    allt = row_from("ops/d.py::Model", "search", timed("d", 0.5, 1.0, 0.6), 4, 30.0)
    assert allt.library_ops == () and "ops/d.py::Model | yes | " in render_table(report([allt]))


def test_reports_of_one_setup_merge_and_others_are_refused():
    from foundry.commands.bench import merge_reports
    from foundry.core.errors import FatalError

    a = row_from("a.py", "search", timed("a", 1.0, 2.0, 1.0), 6, 60.0)
    b = row_from("b.py", "search", timed("b", 1.0, 8.0, 4.0), 6, 60.0)
    first = report([a], notes=("partial: 1 of 2 operators still to run",))
    merged = merge_reports([first, report([b], date="2026-12-02T11:00:00+00:00")])
    assert [r.operator for r in merged.rows] == ["a.py", "b.py"]
    assert merged.aggregate.geomean_speedup_eager == pytest.approx(4.0)
    assert merged.aggregate.geomean_speedup_compile == pytest.approx(2.0)
    assert merged.date.startswith("2026-12-02T11") and merged.notes == ()
    again = row_from("a.py", "search", timed("a", 0.5, 2.0, 1.0), 6, 60.0)  # a re-run after a change
    rerun = merge_reports([merged, report([again], date="2026-12-03T09:00:00+00:00")])
    assert [r.operator for r in rerun.rows] == ["a.py", "b.py"] and rerun.rows[0] == again
    assert rerun.aggregate.geomean_speedup_eager == pytest.approx(4.0 * 2**0.5)
    assert rerun.notes == ("a.py: re-measured in the run of 2026-12-03T09:00:00+00:00",)
    with pytest.raises(FatalError, match="budget"):
        merge_reports([report([a]), report([b], budget=8)])
    with pytest.raises(FatalError, match="device"):
        merge_reports([report([a]), report([b], device="NVIDIA H100")])


def test_a_training_operator_gets_its_forward_backward_and_peak_memory_rows():
    from foundry.core.records import PeakMemory, TrainingTiming

    verdict = timed("t", 0.5, 1.0, 0.8)
    assert verdict.timing is not None
    step = TrainingTiming(
        candidate_ms=2.0, eager_ms=3.0, compile_ms=2.5, memory=PeakMemory(candidate_mib=3, eager_mib=4)
    )
    timing = verdict.timing.model_copy(update={"training": step, "memory": PeakMemory(candidate_mib=1, eager_mib=2)})
    row = row_from("ops/train.py", "search", verdict.model_copy(update={"timing": timing}), 4, 10.0)
    plain = row_from("ops/plain.py", "search", timed("p", 0.5, 1.0, 0.8), 4, 10.0)
    block = render_operator(row)
    assert "forward + backward:" in block and "1.50x vs eager" in block  # 3.0 / 2.0
    assert "peak memory, forward + backward: eager 4.00 MiB, torch.compile -, foundry 3.00 MiB" in block
    assert "forward + backward" not in render_operator(plain)
    table = render_table(report([row, plain]))
    assert "ops/train.py | 3.0000 ms | 2.5000 ms | 2.0000 ms | 1.50x | 1.25x | 4.00 / - / 3.00" in table
    assert "ops/plain.py | 3.0000" not in table  # a forward-only operator has no training row


def test_a_search_with_nothing_verified_says_why():
    from foundry.commands.bench import search_failure
    from foundry.core.records import OperatorSpec, RunReport

    spec = OperatorSpec(path="op.py", name="op")
    base = dict(operator=spec, verified=False, policy="strict", writer="template", device="cpu")
    base |= dict(torch_version="2", triton_version="3", timing_measured=False)
    refused = RunReport(**base, notes=("search stopped: budget", "finalist c1 failed re-verification: run/oom"))
    assert search_failure(refused) == "finalist c1 failed re-verification: run/oom"
    rejected = RunReport(**base, failures={"oom": 1, "compile": 2}, notes=("search stopped: budget",))
    assert search_failure(rejected) == "rejected: oom 1, compile 2"
    assert search_failure(RunReport(**base)) == "nothing verified"
