"""Report rendering: every number from the record, 'not measured' when there was no GPU, text
from outside made inert."""

from __future__ import annotations

import json
import re

import pytest
from foundry.core.records import (
    Candidate,
    Diagnosis,
    ExperienceNote,
    FailureKind,
    GenerationPoint,
    IslandSummary,
    KernelFacts,
    OperatorSpec,
    Roofline,
    RunReport,
    Stage,
    Timing,
    TimingRun,
    Verdict,
)
from foundry.report import NOT_MEASURED, named_checks, render_pr_body, render_report_json, render_report_markdown
from foundry.report.ir import Document

SOURCE = "import triton\n\n@triton.jit\ndef _scale_fwd_kernel(x_ptr):\n    pass\n```\nnot a fence break\n"


def make_report(*, measured: bool, verified: bool = True, message: str = "values differ") -> RunReport:
    op = OperatorSpec(path="ops/scale.py", name="ops-scale", dtype="float32")
    best = Candidate(
        id="c0123",
        source=SOURCE,
        writer="template",
        expert="fusion",
        island=1,
        generation=2,
        parent_id="c0001",
        genes={"BLOCK": 256, "num_warps": 4},
    )
    timing = (
        Timing(
            measured=True,
            device="NVIDIA H200",
            trials=200,
            candidate_ms=0.0125,
            eager_ms=0.0300,
            compile_ms=0.0200,
            roofline=Roofline(
                bytes_moved=8_388_608,
                flops=2_097_152,
                floor_ms=0.0019,
                pct_of_floor=15.2,
                bound="memory",
                bandwidth_gbs=4400.0,
                peak_tflops=989.0,
            ),
        )
        if measured
        else Timing(measured=False, reason="no CUDA device")
    )
    verdict = Verdict(
        candidate_id=best.id,
        verified=verified,
        policy="strict",
        device="NVIDIA H200" if measured else "cpu (Triton interpreter)",
        diagnoses=()
        if verified
        else (Diagnosis(stage=Stage.CORRECTNESS, kind=FailureKind.MISMATCH, message=message, evidence="max |d| 3.1"),),
        warnings=(Diagnosis(stage=Stage.TIMING, kind=FailureKind.TIMING_ANOMALY, message="noisy"),),
        checks_passed=("static_guard", "correctness", "runtime_guard"),
        trials=4,
        triton_launches=1,
        kernels=(KernelFacts(name="_scale_fwd_kernel", registers=32, spills=0, shared_bytes=0, num_warps=4),),
        timing=timing,
    )
    history = tuple(
        GenerationPoint(
            generation=g,
            island=i,
            evaluated=4,
            verified=g + i,
            best_speedup=(1.0 + 0.3 * g + 0.1 * i) if measured else None,
        )
        for g in range(3)
        for i in range(2)
    )
    return RunReport(
        operator=op,
        verified=verified,
        policy="strict",
        writer="template",
        device=verdict.device,
        torch_version="2.13.0",
        triton_version="3.7.1",
        timing_measured=measured,
        best=best,
        best_verdict=verdict,
        budget=24,
        evaluated=23,
        wall_s=12.5,
        islands=(
            IslandSummary(island=0, expert="memory_access", evaluated=12, verified=3, failures={"mismatch": 4}),
            IslandSummary(
                island=1,
                expert="fusion",
                evaluated=11,
                verified=5,
                best_candidate_id="c0123",
                best_speedup=2.4 if measured else None,
                failures={"compile_error": 2, "timeout": 1},
            ),
        ),
        history=history,
        failures={"mismatch": 4, "compile_error": 2, "timeout": 1},
        experience=ExperienceNote(
            retrieved_hints=("vectorize loads",),
            retrieved_kernels=("k9",),
            helped=True,
            summary="seeded from a kernel of ops-scale on H200",
        ),
        notes=("probe: zeros would fail",),
    )


def test_cpu_report_says_not_measured_and_invents_no_numbers() -> None:
    text = render_report_markdown(make_report(measured=False))
    assert NOT_MEASURED in text
    results = text.split("## Results")[1].split("## Diagnosis")[0]
    assert results.count(NOT_MEASURED) >= 5
    assert " ms" not in results and "×" not in results
    assert "Bound class and % of roofline:** not measured (needs a GPU)" in text
    assert "Verified candidates per generation" in text  # chart of real counts, not invented speedups
    assert "| 1 | fusion | 11 | 5 | `c0123` | not measured (needs a GPU) |" in text


def test_gpu_report_tables_carry_the_measured_numbers() -> None:
    text = render_report_markdown(make_report(measured=True))
    assert "0.0125 ms" in text and "0.0300 ms" in text and "0.0200 ms" in text
    assert "**2.40×**" in text  # 0.03 / 0.0125
    assert "**1.60×**" in text  # 0.02 / 0.0125
    assert "15.2%" in text and "memory" in text
    assert "| `_scale_fwd_kernel` | 32 | 0 | 0 | 4 | — |" in text
    assert NOT_MEASURED not in text
    chart = re.search(r"```mermaid\n(.*?)```", text, re.S).group(1)
    assert "xychart-beta" in chart
    assert 'x-axis "generation" ["0", "1", "2"]' in chart
    assert "line [1.1, 1.4, 1.7]" in chart  # best so far over both islands
    assert "| checks passed | 3: static\\_guard, correctness, runtime\\_guard" in text


def test_the_two_trial_counts_say_what_each_counts() -> None:
    # Verdict.trials counts the trials on fresh random inputs at the operator's shapes; the evaluator's
    # "N trials within tolerance" counts every input set compared (those, shape variants, transformed inputs).
    report = make_report(measured=True)
    verdict = report.best_verdict
    assert verdict is not None
    checks = ("static guard", "output types", "7 trials within tolerance", "trivial-answer probes")
    verdict = verdict.model_copy(update={"trials": 6, "checks_passed": checks})
    text = render_report_markdown(report.model_copy(update={"best_verdict": verdict}))
    assert "| correctness trials | 6 |" in text
    assert "7 input sets within tolerance: the 6 correctness trials and 1 shape variant or transformed input" in text
    assert "7 trials within tolerance" not in text
    same = verdict.model_copy(update={"trials": 3, "checks_passed": ("3 trials within tolerance",)})
    assert named_checks(same) == ("3 input sets within tolerance: the 3 correctness trials",)
    more = verdict.model_copy(update={"trials": 3, "checks_passed": ("8 trials within tolerance",)})
    assert named_checks(more) == (
        "8 input sets within tolerance: the 3 correctness trials and 5 shape variants and transformed inputs",
    )


def test_gpu_report_lists_the_final_runs_and_the_hosts_launch_time() -> None:
    report = make_report(measured=True)
    verdict = report.best_verdict
    assert verdict is not None and verdict.timing is not None
    runs = (
        TimingRun(candidate_ms=0.0125, eager_ms=0.0300, compile_ms=0.0200),
        TimingRun(candidate_ms=0.0131, eager_ms=0.0310, compile_ms=None),
        TimingRun(candidate_ms=0.0120, eager_ms=0.0290, compile_ms=0.0210),
    )
    timing = verdict.timing.model_copy(update={"runs": runs, "host_ms": 0.0400})
    report = report.model_copy(update={"best_verdict": verdict.model_copy(update={"timing": timing})})
    text = render_report_markdown(report)
    assert "Timed in 3 runs" in text
    assert "Foundry 0.0125 / 0.0131 / 0.0120 ms" in text and "torch.compile 0.0200 / — / 0.0210 ms" in text
    assert "host time to launch one call | 0.0400 ms (not in the time above" in text
    assert "runs at the host's pace" in text  # 0.04 ms to launch a 0.0125 ms kernel
    plain = render_report_markdown(make_report(measured=True))
    assert "Timed in" not in plain and "host time" not in plain  # nothing said where nothing was measured


def test_failures_experience_and_details() -> None:
    text = render_report_markdown(make_report(measured=True))
    failures = text.split("### Failures by kind")[1]
    assert failures.index("mismatch") < failures.index("compile\\_error") < failures.index("timeout")
    assert "hints retrieved: 1 (vectorize loads)" in text
    assert "best lineage started from retrieved material: yes" in text
    assert "<details>\n<summary>Kernel source</summary>" in text
    assert "````python" in text  # fence longer than the backticks in the source
    assert "genes: BLOCK=256, num\\_warps=4" in text


def test_rejected_report_explains_why() -> None:
    text = render_report_markdown(make_report(measured=False, verified=False))
    assert text.splitlines()[2].startswith("No verified kernel for `ops/scale.py::Model`")
    assert "Why the best candidate was rejected" in text
    assert "max |d| 3.1" in text


def test_outside_text_is_inert() -> None:
    evil = "<!-- kernel-foundry:pull-request operator=x --> @octocat <img src=x> | cell"
    text = render_report_markdown(make_report(measured=False, verified=False, message=evil))
    assert "<!--" not in text and "<img" not in text
    assert "@octocat" not in text and "&#64;octocat" in text


def test_pr_body_has_marker_and_no_source() -> None:
    marker = "<!-- kernel-foundry:pull-request operator=ops-scale -->"
    body = render_pr_body(make_report(measured=True), marker, footer="Made by Kernel Foundry.")
    assert body.startswith(marker + "\n")
    assert "Kernel source" not in body
    assert body.rstrip().endswith("Made by Kernel Foundry.")
    with pytest.raises(ValueError):
        render_pr_body(make_report(measured=True), "visible marker")


def test_pr_body_is_cut_to_github_limit() -> None:
    report = make_report(measured=True).model_copy(update={"notes": tuple("n" * 500 for _ in range(300))})
    body = render_pr_body(report, "<!-- m -->", footer="footer")
    assert len(body) <= 60_000
    assert body.startswith("<!-- m -->") and body.rstrip().endswith("footer")


def test_json_round_trip() -> None:
    report = make_report(measured=True)
    data = json.loads(render_report_json(report))
    assert RunReport.model_validate(data["report"]) == report
    document = Document.model_validate(data["document"])
    kinds = {p.kind for p in document.parts}
    assert {"table", "chart", "heading", "text"} <= kinds
