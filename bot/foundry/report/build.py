"""RunReport → report IR. Every number comes from the record; what was not measured says so."""

from __future__ import annotations

import re

from foundry.core.records import RunReport, Timing, Verdict
from foundry.report.ir import AnyPart, Bullets, Code, Details, Document, Heading, LineChart, Table, Text
from foundry.report.markdown import code_span, escape

NOT_MEASURED = "not measured (needs a GPU)"
# Two counts, named apart. Verdict.trials, "correctness trials": the trials on fresh random inputs at the
# operator's own shapes (get_inputs, or get_cpu_inputs under the interpreter). The evaluator's check
# "N trials within tolerance": every input set whose outputs were compared, those plus the shape variants and
# the transformed inputs (scaled, offset, non-contiguous).
COMPARED = re.compile(r"^(\d+) trials within tolerance$")


def _ms(value: float | None) -> str:
    return f"{value:.4f} ms" if value is not None else "—"


def _x(value: float | None) -> str:
    return f"{value:.2f}×" if value is not None else "—"


def headline(report: RunReport) -> str:
    """One line: what happened, for titles, status comments and summaries."""
    ref = code_span(report.operator.ref)
    if not report.verified or report.best is None:
        return f"No verified kernel for {ref} ({report.evaluated} candidates evaluated)."
    timing = report.timing
    if timing is None or not timing.measured or timing.speedup_eager is None:
        return f"Verified Triton kernel for {ref} on {escape(report.device)}; speed {NOT_MEASURED}."
    return (
        f"Verified Triton kernel for {ref}: **{timing.speedup_eager:.2f}×** over eager"
        + (f", {timing.speedup_compile:.2f}× over torch.compile" if timing.speedup_compile else "")
        + f" on {escape(timing.device or report.device)}."
    )


def results_table(report: RunReport) -> Table:
    timing = report.timing
    headers = ("", "time", "speedup vs eager", "speedup vs torch.compile")
    if timing is None or not timing.measured:
        cell = NOT_MEASURED
        rows = (
            ("eager PyTorch", cell, "—", "—"),
            ("torch.compile", cell, "—", "—"),
            ("Foundry (Triton)", cell, cell, cell),
        )
        return Table(headers=headers, rows=rows, align=("left", "right", "right", "right"))
    rows = speed_rows(
        timing.eager_ms, timing.compile_ms, timing.candidate_ms, timing.speedup_eager, timing.speedup_compile
    )
    return Table(headers=headers, rows=rows, align=("left", "right", "right", "right"))


def speed_rows(
    eager: float | None,
    compiled: float | None,
    cand: float | None,
    speedup_eager: float | None,
    speedup_compile: float | None,
) -> tuple[tuple[str, str, str, str], ...]:
    """Eager, torch.compile and the kernel: each one's time and its speedup against eager and torch.compile."""
    return (
        ("eager PyTorch", _ms(eager), "1.00×" if eager else "—", _x(compiled / eager if compiled and eager else None)),
        (
            "torch.compile",
            _ms(compiled),
            _x(eager / compiled if compiled and eager else None),
            "1.00×" if compiled else "—",
        ),
        ("**Foundry (Triton)**", f"**{_ms(cand)}**", f"**{_x(speedup_eager)}**", f"**{_x(speedup_compile)}**"),
    )


def _mib(value: float | None) -> str:
    return f"{value:.1f} MiB" if value is not None else "—"


def memory_table(timing: Timing | None) -> list[AnyPart]:
    """Peak device memory of one forward, and for a training operator its forward + backward step timed as
    the forward is (eager, torch.compile, the kernel side by side): only where the GPU measured them."""
    if timing is None or not timing.measured:
        return []
    parts: list[AnyPart] = []
    train = timing.training
    if train is not None:
        rows = speed_rows(
            train.eager_ms, train.compile_ms, train.candidate_ms, train.speedup_eager, train.speedup_compile
        )
        parts += [
            Text(
                text="Training step: forward and backward (inputs and parameters requiring grad, fixed upstream "
                "gradients), timed as the forward is."
            ),
            Table(
                headers=("forward + backward", "time", "speedup vs eager", "speedup vs torch.compile"),
                rows=rows,
                align=("left", "right", "right", "right"),
            ),
        ]
    memories = [("forward", timing.memory)] + ([("forward + backward", train.memory)] if train is not None else [])
    memories = [(what, m) for what, m in memories if m is not None and m.candidate_mib is not None]
    if memories:
        parts.append(
            Table(
                headers=("peak memory", "eager PyTorch", "torch.compile", "Foundry (Triton)"),
                rows=tuple(
                    (what, _mib(m.eager_mib), _mib(m.compile_mib), _mib(m.candidate_mib)) for what, m in memories
                ),
                align=("left", "right", "right", "right"),
            )
        )
    return parts


def timing_note(timing: Timing | None) -> list[AnyPart]:
    if timing is not None and not timing.measured and timing.reason:
        return [Text(text=f"Timing: {escape(timing.reason)}")]
    if timing is not None and len(timing.runs) > 1:
        return [Text(text=runs_sentence(timing))]
    return []


def runs_sentence(timing: Timing) -> str:
    """The finalist's timing runs, each time listed: the table's times are their medians."""

    def listed(values: list[float | None]) -> str:
        return " / ".join("—" if v is None else f"{v:.4f}" for v in values) + " ms"

    runs = timing.runs
    parts = [f"Foundry {listed([r.candidate_ms for r in runs])}", f"eager {listed([r.eager_ms for r in runs])}"]
    if any(r.compile_ms is not None for r in runs):
        parts.append(f"torch.compile {listed([r.compile_ms for r in runs])}")
    return (
        f"Timed in {len(runs)} runs (the kernel in a fresh worker process each time, eager and torch.compile "
        f"beside it, new inputs): {'; '.join(parts)}. The table gives the medians."
    )


def named_checks(verdict: Verdict) -> tuple[str, ...]:
    """The verdict's passed checks, the count of compared input sets spelled out beside Verdict.trials (so
    "6 correctness trials" and "7 trials within tolerance" no longer read as two answers to one question)."""
    named = []
    for check in verdict.checks_passed:
        match = COMPARED.match(check)
        compared = int(match.group(1)) if match else 0
        if match and compared >= verdict.trials:
            more = compared - verdict.trials
            others = "shape variant or transformed input" if more == 1 else "shape variants and transformed inputs"
            check = f"{compared} input sets within tolerance: the {verdict.trials} correctness trials" + (
                f" and {more} {others}" if more else ""
            )
        named.append(check)
    return tuple(named)


def facts_table(report: RunReport) -> Table:
    verdict = report.best_verdict
    timing = report.timing
    rows: list[tuple[str, str]] = [
        ("device", escape(timing.device if timing and timing.device else report.device)),
        ("dtype", escape(report.operator.dtype)),
        ("precision (tolerance class)", escape(report.operator.precision)),
        ("policy", escape(report.policy)),
    ]
    if verdict is not None:
        checks = ", ".join(escape(c) for c in named_checks(verdict)) or "none recorded"
        rows += [
            ("correctness trials", str(verdict.trials)),
            ("checks passed", f"{len(verdict.checks_passed)}: {checks}"),
            ("Triton launches observed", str(verdict.triton_launches)),
        ]
        if verdict.library_ops:
            rows.append(("library ops outside Triton (hybrid)", ", ".join(escape(o) for o in verdict.library_ops)))
    if timing is not None and timing.measured:
        rows.append(("timing trials", str(timing.trials)))
        if timing.host_ms is not None:
            rows.append(("host time to launch one call", host_cell(timing)))
    rows += [
        ("candidates evaluated", f"{report.evaluated} of a budget of {report.budget}"),
        ("writer", escape(report.writer)),
        ("wall time", f"{report.wall_s:.1f} s"),
        ("torch / triton", f"{escape(report.torch_version)} / {escape(report.triton_version)}"),
    ]
    return Table(headers=("fact", "value"), rows=tuple(rows))


def host_cell(timing: Timing) -> str:
    """The host's enqueue time per call, kept out of the measured time; where it exceeds it, what that means."""
    assert timing.host_ms is not None
    cell = f"{timing.host_ms:.4f} ms (not in the time above, which is the device's)"
    if timing.host_bound:
        cell += (
            "; more than the device needs: called back to back with nothing else queued, the kernel runs at the "
            "host's pace"
        )
    return cell


def roofline_parts(timing: Timing | None) -> list[AnyPart]:
    if timing is None or not timing.measured or timing.roofline is None:
        return [Text(text=f"**Bound class and % of roofline:** {NOT_MEASURED}.")]
    r = timing.roofline
    return [
        Table(
            headers=("bound", "% of roofline floor", "floor", "bytes moved", "FLOPs", "ceilings"),
            rows=(
                (
                    escape(r.bound),
                    f"{r.pct_of_floor:.1f}%",
                    f"{r.floor_ms:.4f} ms",
                    f"{r.bytes_moved:,}",
                    f"{r.flops:,}",
                    f"{r.bandwidth_gbs:.0f} GB/s, {r.peak_tflops:.0f} TFLOP/s",
                ),
            ),
        )
    ]


def kernel_facts(verdict: Verdict | None) -> list[AnyPart]:
    if verdict is None or not verdict.kernels:
        return []

    def opt(value: int | None) -> str:
        return "—" if value is None else str(value)

    rows = tuple(
        (code_span(k.name), opt(k.registers), opt(k.spills), opt(k.shared_bytes), opt(k.num_warps), opt(k.num_stages))
        for k in verdict.kernels
    )
    return [
        Table(
            headers=("kernel", "registers", "spills", "shared bytes", "warps", "stages"),
            rows=rows,
            align=("left", "right", "right", "right", "right", "right"),
        )
    ]


def islands_table(report: RunReport) -> list[AnyPart]:
    if not report.islands:
        return []
    rows = []
    for isl in report.islands:
        if isl.best_speedup is not None:
            best = _x(isl.best_speedup)
        elif isl.best_candidate_id is not None:
            best = NOT_MEASURED
        else:
            best = "no verified candidate"
        top = sorted(isl.failures.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        failures = ", ".join(f"{escape(k)} {v}" for k, v in top) or "none"
        rows.append(
            (
                str(isl.island),
                escape(isl.expert),
                str(isl.evaluated),
                str(isl.verified),
                code_span(isl.best_candidate_id) if isl.best_candidate_id else "—",
                best,
                failures,
            )
        )
    return [
        Heading(text="Best per island", level=3),
        Table(
            headers=("island", "expert", "evaluated", "verified", "best candidate", "best speedup", "top failures"),
            rows=tuple(rows),
            align=("right", "left", "right", "right", "left", "right", "left"),
        ),
    ]


def failures_table(report: RunReport) -> list[AnyPart]:
    if not report.failures:
        return [Heading(text="Failures by kind", level=3), Text(text="No candidate was rejected.")]
    rows = tuple(
        (escape(kind), str(count)) for kind, count in sorted(report.failures.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    return [
        Heading(text="Failures by kind", level=3),
        Table(headers=("failure kind", "candidates"), rows=rows, align=("left", "right")),
    ]


def experience_parts(report: RunReport) -> list[AnyPart]:
    note = report.experience
    helped = {True: "yes", False: "no", None: "unknown"}[note.helped]
    items = [
        f"hints retrieved: {len(note.retrieved_hints)}"
        + (f" ({', '.join(escape(h) for h in note.retrieved_hints[:8])})" if note.retrieved_hints else ""),
        f"kernels seeded into generation 0: {len(note.retrieved_kernels)}",
        f"best lineage started from retrieved material: {helped}",
    ]
    parts: list[AnyPart] = [
        Heading(text="What the experience library contributed", level=3),
        Bullets(items=tuple(items)),
    ]
    if note.summary:
        parts.append(Text(text=escape(note.summary)))
    return parts


def speedup_chart(report: RunReport) -> list[AnyPart]:
    """Best-so-far speedup over eager per generation, across islands; counts when not measured."""
    if not report.history:
        return []
    generations = sorted({p.generation for p in report.history})
    measured = [p.best_speedup for p in report.history if p.best_speedup is not None]
    if measured:
        best_so_far: list[float] = []
        running: float | None = None
        for g in generations:
            values = [p.best_speedup for p in report.history if p.generation == g and p.best_speedup is not None]
            if values:
                running = max(values) if running is None else max(running, max(values))
            best_so_far.append(running if running is not None else 0.0)
        return [
            Heading(text="Best speedup per generation", level=3),
            LineChart(
                title="Best verified speedup over eager (all islands)",
                x_label="generation",
                y_label="speedup (×)",
                x=tuple(str(g) for g in generations),
                series=tuple(best_so_far),
            ),
        ]
    verified = tuple(float(sum(p.verified for p in report.history if p.generation == g)) for g in generations)
    return [
        Heading(text="Verified candidates per generation", level=3),
        Text(text=f"Speedup per generation: {NOT_MEASURED}."),
        LineChart(
            title="Verified candidates per generation (all islands)",
            x_label="generation",
            y_label="verified",
            x=tuple(str(g) for g in generations),
            series=verified,
        ),
    ]


def detail_parts(report: RunReport, *, include_source: bool) -> list[AnyPart]:
    parts: list[AnyPart] = []
    verdict = report.best_verdict
    best = report.best
    if best is not None:
        lineage = [
            f"candidate {code_span(best.id)} from island {best.island} ({escape(best.expert or 'no expert')}), "
            f"generation {best.generation}, writer {escape(best.writer)}",
            f"parent: {code_span(best.parent_id) if best.parent_id else 'none (seed)'}",
        ]
        if best.genes:
            genes = ", ".join(f"{escape(k)}={escape(str(v))}" for k, v in sorted(best.genes.items()))
            lineage.append(f"genes: {genes}")
        parts.append(Details(summary="Lineage of the best candidate", parts=(Bullets(items=tuple(lineage)),)))
    if verdict is not None and verdict.failure is not None:
        failure = verdict.failure
        inner: list[AnyPart] = [Text(text=escape(failure.headline()))]
        if failure.evidence:
            inner.append(Code(text=failure.evidence, language="text"))
        parts.append(Details(summary="Why the best candidate was rejected", parts=tuple(inner)))
    if verdict is not None and verdict.warnings:
        parts.append(
            Details(
                summary=f"Warnings ({len(verdict.warnings)})",
                parts=(Bullets(items=tuple(escape(w.headline()) for w in verdict.warnings)),),
            )
        )
    if report.notes:
        parts.append(Details(summary="Notes", parts=(Bullets(items=tuple(escape(n) for n in report.notes)),)))
    if include_source and best is not None:
        parts.append(Details(summary="Kernel source", parts=(Code(text=best.source, language="python"),)))
    return parts


def build_document(report: RunReport, *, include_source: bool = True) -> Document:
    parts: list[AnyPart] = [Text(text=headline(report))]
    if not report.verified:
        parts.append(
            Text(
                text="No candidate passed every check, so there is no kernel to propose. "
                "The diagnosis below says what went wrong."
            )
        )
    parts += [
        Heading(text="Results"),
        results_table(report),
        *timing_note(report.timing),
        *memory_table(report.timing),
        facts_table(report),
        Heading(text="Diagnosis"),
        *roofline_parts(report.timing),
        *kernel_facts(report.best_verdict),
        *islands_table(report),
        *failures_table(report),
        *experience_parts(report),
        *speedup_chart(report),
    ]
    details = detail_parts(report, include_source=include_source)
    if details:
        parts += [Heading(text="Details"), *details]
    return Document(title=f"Kernel Foundry report: {code_span(report.operator.ref)}", parts=tuple(parts))
