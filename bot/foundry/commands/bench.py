"""`foundry bench OPERATOR[=KERNEL]... [--out FILE.json] [--json] [search options of optimize]`

Eager PyTorch, torch.compile and Foundry side by side, timed in one run on a GPU. For OPERATOR alone
the search runs first (as `foundry optimize`); for OPERATOR=KERNEL.py the given kernel is verified
and timed as it is. Prints a table per operator and the aggregate: geometric-mean speedups and the
share of operators where Foundry is faster than eager and than torch.compile. Timing needs a CUDA GPU:
without one, bench stops at once (exit 2) unless --allow-cpu asks for the kernels to be verified under the
Triton interpreter with no times in the table (`foundry check` and `foundry optimize` verify without timing).
Exit 0 when every operator has a verified kernel, 1 otherwise, 2 on bad input or no GPU."""

from __future__ import annotations

import argparse
import hashlib
import math
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from foundry.commands.optimize import SearchOptions, add_search_arguments, optimize_operator
from foundry.core.errors import FatalError
from foundry.core.records import Candidate, PeakMemory, RunReport, TrainingTiming, Verdict
from foundry.evolve.progress import LogProgress

NOT_MEASURED = "timing needs a GPU: verified under the Triton interpreter, speed not measured"
NO_GPU = (
    "bench times kernels and timing needs a CUDA GPU; none is visible. To verify without timing, run "
    "`foundry check OPERATOR KERNEL` or `foundry optimize OPERATOR`, or pass --allow-cpu to bench anyway "
    "(verified under the Triton interpreter, no times)"
)


class BenchRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    operator: str
    kernel: str  # "search" or the path of the given kernel
    verified: bool
    measured: bool
    candidate_id: str | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    foundry_ms: float | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    pct_of_roofline: float | None = None
    bound: str | None = None
    evaluated: int = 0
    wall_s: float = 0.0
    candidates_per_minute: float | None = None
    failure: str | None = None
    library_ops: tuple[str, ...] = ()  # aten ops the kernel left to the library (hybrid policy)
    note: str = ""
    runs_ms: tuple[float, ...] = ()  # Foundry's time in each timing run of the final check (the median above)
    host_ms: float | None = None  # the host's time to enqueue one call of Foundry's kernel (not in foundry_ms)
    memory: PeakMemory | None = None  # a forward's peak device memory (eager, torch.compile, Foundry)
    training: TrainingTiming | None = None  # a training operator's forward + backward step, and its peak memory


class BenchAggregate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    operators: int
    verified: int
    measured: int
    geomean_speedup_eager: float | None = None
    geomean_speedup_compile: float | None = None
    share_faster_than_eager: float | None = None
    share_faster_than_compile: float | None = None


class BenchReport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    date: str = ""  # UTC, ISO 8601, when the bench finished (or was cut short)
    device: str
    torch_version: str
    triton_version: str
    python_version: str
    policy: str
    writer: str
    budget: int
    rows: tuple[BenchRow, ...]
    aggregate: BenchAggregate
    notes: tuple[str, ...] = ()


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "bench",
        help="eager vs torch.compile vs foundry, side by side",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "operators",
        nargs="+",
        metavar="OPERATOR[=KERNEL]",
        help="path/to/op.py[::Class], optionally =path/to/kernel.py to time a given kernel",
    )
    add_search_arguments(parser)
    parser.add_argument(
        "--allow-cpu",
        action="store_true",
        help="without a GPU, verify the kernels under the Triton interpreter and print the table with no "
        "times (by default bench stops: there is nothing to time)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="write the bench report as JSON to FILE.json (default: none)"
    )
    parser.add_argument("--json", action="store_true", help="print the bench report as JSON on stdout")
    parser.set_defaults(handler=run)


def split_target(target: str) -> tuple[str, Path | None]:
    """OPERATOR or OPERATOR=KERNEL.py (the last '=' whose right side is a .py file path)."""
    operator, sep, kernel = target.rpartition("=")
    if sep and operator and kernel.endswith(".py"):
        return operator, Path(kernel)
    return target, None


def gpu_present() -> bool:
    import torch

    return torch.cuda.is_available()


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def row_note(verdict: Verdict | None) -> str:
    """A timed row: how the baselines ran ('' when nothing is to be said); an untimed one: why."""
    timing = verdict.timing if verdict else None
    if timing is not None and timing.measured:
        return "; ".join(timing.baseline_notes)
    if verdict is None or not verdict.verified:
        return "not timed: no verified kernel"
    if not gpu_present():
        return NOT_MEASURED
    return timing.reason if timing is not None and timing.reason else "not timed"


def row_from(operator: str, kernel: str, verdict: Verdict | None, evaluated: int, wall_s: float) -> BenchRow:
    timing = verdict.timing if verdict else None
    measured = bool(timing and timing.measured)
    failure = verdict.failure.headline() if verdict and verdict.failure else None
    roofline = timing.roofline if timing else None
    return BenchRow(
        operator=operator,
        kernel=kernel,
        verified=bool(verdict and verdict.verified),
        measured=measured,
        candidate_id=verdict.candidate_id if verdict else None,
        eager_ms=timing.eager_ms if measured and timing else None,
        compile_ms=timing.compile_ms if measured and timing else None,
        foundry_ms=timing.candidate_ms if measured and timing else None,
        speedup_eager=timing.speedup_eager if measured and timing else None,
        speedup_compile=timing.speedup_compile if measured and timing else None,
        pct_of_roofline=roofline.pct_of_floor if roofline else None,
        bound=roofline.bound if roofline else None,
        evaluated=evaluated,
        wall_s=round(wall_s, 3),
        candidates_per_minute=round(evaluated / wall_s * 60, 2) if evaluated and wall_s > 0 else None,
        failure=failure if verdict is None or not verdict.verified else None,
        library_ops=verdict.library_ops if verdict and verdict.verified else (),
        note=row_note(verdict),
        runs_ms=tuple(r.candidate_ms for r in timing.runs) if measured and timing else (),
        memory=timing.memory if measured and timing else None,
        training=timing.training if measured and timing else None,
        host_ms=timing.host_ms if measured and timing else None,
    )


def aggregate(rows: list[BenchRow]) -> BenchAggregate:
    measured = [r for r in rows if r.verified and r.measured]
    eager = [r.speedup_eager for r in measured if r.speedup_eager]
    compiled = [r.speedup_compile for r in measured if r.speedup_compile]
    n = len(rows)
    return BenchAggregate(
        operators=n,
        verified=sum(r.verified for r in rows),
        measured=len(measured),
        geomean_speedup_eager=geomean(eager),
        geomean_speedup_compile=geomean(compiled),
        # Shares are over all operators: one without a verified, timed kernel is not faster.
        share_faster_than_eager=sum(s > 1.0 for s in eager) / n if measured else None,
        share_faster_than_compile=sum(s > 1.0 for s in compiled) / n if measured else None,
    )


def bench_kernel(operator: str, kernel: Path, options: SearchOptions) -> BenchRow:
    from foundry.commands.check import check_reference
    from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
    from foundry.spec.loader import load_operator

    loaded = load_operator(operator)
    check_reference(loaded)  # an operator that does not run is bad input (exit 2), not a rejected kernel
    try:
        source = kernel.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise FatalError(f"{kernel}: cannot read the kernel: {exc}") from exc
    candidate = Candidate(id=hashlib.sha256(source.encode()).hexdigest()[:12], source=source, writer="given")
    evaluator = CandidateEvaluator(loaded, policy=options.policy, config=EvaluatorConfig())
    # as a search's finalist: new seeds, REVERIFY_TIMING_TRIALS-trial timing runs, several on a GPU
    verdict = evaluator.reverify(candidate)
    return row_from(loaded.spec.ref, str(kernel), verdict, 1, verdict.wall_s)


def bench_search(operator: str, options: SearchOptions) -> BenchRow:
    from foundry.spec.loader import load_operator

    loaded = load_operator(operator)
    outcome = optimize_operator(loaded, options, LogProgress())
    report = outcome.report
    row = row_from(loaded.spec.ref, "search", report.best_verdict, report.evaluated, report.wall_s)
    return row if row.verified else row.model_copy(update={"failure": search_failure(report)})


def search_failure(report: RunReport) -> str:
    """Why a search ended with nothing verified: its finalists' failed re-verifications, else its rejections."""
    finalists = [n for n in report.notes if n.startswith("finalist ")]
    if finalists:
        return "; ".join(finalists)
    if report.failures:
        return "rejected: " + ", ".join(f"{kind} {n}" for kind, n in report.failures.items())
    return "nothing verified"


def fmt(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.4f}{unit}" if unit == " ms" else f"{value:.2f}{unit}"


def time_lines(eager: float | None, compiled: float | None, foundry: float | None) -> list[str]:
    """Eager's, torch.compile's and Foundry's times, a line each, with the speedup over eager."""
    lines = []
    for label, ms in (("eager", eager), ("torch.compile", compiled), ("foundry", foundry)):
        speed = f"{eager / ms:.2f}x vs eager" if eager and ms else "-"
        lines.append(f"  {label:<14} {fmt(ms, ' ms'):>12}   {speed}")
    return lines


def render_operator(row: BenchRow) -> str:
    """One operator: eager, torch.compile and Foundry side by side."""
    state = "verified" if row.verified else f"not verified: {row.failure or 'nothing verified'}"
    if row.library_ops:
        state += f" with library {', '.join(row.library_ops)}"
    facts = [state, f"{row.evaluated} candidate(s) in {row.wall_s:.0f} s"]
    if row.pct_of_roofline is not None:
        facts.append(f"{row.pct_of_roofline:.0f}% of roofline, {row.bound}-bound")
    lines = [f"{row.operator} [{row.kernel}] ({'; '.join(facts)})"]
    if not row.measured:
        lines.append("  " + (row.note or "not timed: no verified kernel"))
        return "\n".join(lines)
    lines += time_lines(row.eager_ms, row.compile_ms, row.foundry_ms)
    if row.host_ms is not None and row.foundry_ms and row.host_ms > row.foundry_ms:
        lines.append(
            f"  (the host takes {row.host_ms:.4f} ms to launch one call, longer than the kernel runs: "
            "back to back with nothing else queued, it runs at the host's pace)"
        )
    train = row.training
    if train is not None:
        lines += ["  forward + backward:", *time_lines(train.eager_ms, train.compile_ms, train.candidate_ms)]
    for what, memory in (("forward", row.memory), ("forward + backward", train.memory if train else None)):
        if memory is not None and memory.candidate_mib is not None:
            lines.append(
                f"  peak memory, {what}: eager {fmt(memory.eager_mib, ' MiB')}, torch.compile "
                f"{fmt(memory.compile_mib, ' MiB')}, foundry {fmt(memory.candidate_mib, ' MiB')}"
            )
    if len(row.runs_ms) > 1:
        times = " / ".join(f"{ms:.4f}" for ms in row.runs_ms)
        lines.append(f"  (foundry timed in {len(row.runs_ms)} runs: {times} ms; the median above)")
    if row.note:
        lines.append(f"  ({row.note})")
    return "\n".join(lines)


def verified_cell(row: BenchRow) -> str:
    """'yes', 'yes (library: convolution)' for a hybrid kernel that leaves ops to the library, or 'no (why)'."""
    if not row.verified:
        return f"no ({row.failure or 'nothing verified'})"
    return f"yes (library: {', '.join(row.library_ops)})" if row.library_ops else "yes"


def render_table(report: BenchReport) -> str:
    headers = (
        "operator",
        "verified",
        "eager",
        "torch.compile",
        "foundry",
        "vs eager",
        "vs compile",
        "% roofline",
        "cand/min",
    )
    lines = [
        f"bench on {report.device} · torch {report.torch_version} · triton {report.triton_version} · "
        f"policy {report.policy} · writer {report.writer} · budget {report.budget}"
        + (f" · {report.date}" if report.date else ""),
        " | ".join(headers),
        " | ".join("---" for _ in headers),
    ]
    for r in report.rows:
        lines.append(
            " | ".join(
                (
                    r.operator,
                    verified_cell(r),
                    fmt(r.eager_ms, " ms"),
                    fmt(r.compile_ms, " ms"),
                    fmt(r.foundry_ms, " ms"),
                    fmt(r.speedup_eager, "x"),
                    fmt(r.speedup_compile, "x"),
                    fmt(r.pct_of_roofline, "%"),
                    fmt(r.candidates_per_minute),
                )
            )
        )
    trained = [r for r in report.rows if r.training is not None]
    if trained:
        headers = ("operator", "fwd+bwd eager", "fwd+bwd torch.compile", "fwd+bwd foundry", "vs eager", "vs compile")
        headers += ("peak MiB eager / compile / foundry",)
        lines += ["", " | ".join(headers), " | ".join("---" for _ in headers)]
        for r in trained:
            t = r.training
            assert t is not None
            m = t.memory
            peaks = " / ".join(fmt(v) for v in (m.eager_mib, m.compile_mib, m.candidate_mib)) if m else "-"
            cells = (r.operator, fmt(t.eager_ms, " ms"), fmt(t.compile_ms, " ms"), fmt(t.candidate_ms, " ms"))
            cells += (fmt(t.speedup_eager, "x"), fmt(t.speedup_compile, "x"), peaks)
            lines.append(" | ".join(cells))
        lines.append("")
    a = report.aggregate
    lines.append(f"{a.verified}/{a.operators} verified, {a.measured} timed")
    if a.measured:
        lines.append(
            f"geometric mean: {fmt(a.geomean_speedup_eager, 'x')} over eager, "
            f"{fmt(a.geomean_speedup_compile, 'x')} over torch.compile; faster than eager on "
            f"{a.share_faster_than_eager:.0%}, than torch.compile on {a.share_faster_than_compile:.0%} of operators"
        )
    lines.extend(report.notes)
    return "\n".join(lines)


def merge_reports(reports: list[BenchReport]) -> BenchReport:
    """One report from several runs of the same setup (a bench split over device calls of limited length):
    rows in order, the aggregate recomputed; runs that differ in device, versions, policy, writer or budget
    are refused. An operator measured again in a later report (a re-run after a change) keeps its place
    with the later row, and a note says which run it comes from."""
    if not reports:
        raise FatalError("nothing to merge")
    first = reports[0]
    setup = ("device", "torch_version", "triton_version", "policy", "writer", "budget")
    for other in reports[1:]:
        differs = [k for k in setup if getattr(other, k) != getattr(first, k)]
        if differs:
            raise FatalError(f"cannot merge bench reports that differ in {', '.join(differs)}")
    latest: dict[str, BenchRow] = {}
    notes = [n for r in reports for n in r.notes if not n.startswith("partial:")]
    for r in reports:
        for row in r.rows:
            if row.operator in latest:
                notes.append(f"{row.operator}: re-measured in the run of {r.date}")
            latest[row.operator] = row
    rows = list(latest.values())
    return first.model_copy(
        update={
            "date": max(r.date for r in reports),
            "rows": tuple(rows),
            "aggregate": aggregate(rows),
            "notes": tuple(dict.fromkeys(notes)),
        }
    )


def write_report(report: BenchReport, out: Path) -> None:
    """Atomically: a reader (or a run cut short) sees the previous complete file or the new one."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(report.model_dump_json(indent=2) + "\n")
        tmp.replace(out)
    except OSError as exc:
        raise FatalError(f"{out}: cannot write the bench report: {exc.strerror or exc}") from exc


def run(args: argparse.Namespace) -> int:
    import torch
    import triton

    options = SearchOptions.from_args(args)
    targets = [split_target(t) for t in args.operators]
    gpu = gpu_present()
    if not gpu and not args.allow_cpu:
        raise FatalError(NO_GPU)  # before any search: a search without a GPU would end in a table with no times
    notes = [] if gpu else [NOT_MEASURED]
    if not gpu:
        print(f"foundry bench: {NOT_MEASURED}", file=sys.stderr)
    rows: list[BenchRow] = []

    def build(partial: bool) -> BenchReport:
        left = len(targets) - len(rows)
        return BenchReport(
            date=datetime.now(UTC).isoformat(timespec="seconds"),
            device=torch.cuda.get_device_name() if gpu else "cpu (Triton interpreter)",
            torch_version=torch.__version__,
            triton_version=triton.__version__,
            python_version=platform.python_version(),
            policy=options.policy,
            writer=options.writer,
            budget=options.budget,
            rows=tuple(rows),
            aggregate=aggregate(rows),
            notes=tuple(notes + ([f"partial: {left} of {len(targets)} operators still to run"] if partial else [])),
        )

    for operator, kernel in targets:
        print(f"bench: {operator}" + (f" with {kernel}" if kernel else " (searching)"), file=sys.stderr)
        rows.append(bench_kernel(operator, kernel, options) if kernel else bench_search(operator, options))
        if args.out and len(rows) < len(targets):
            write_report(build(partial=True), args.out)  # a bench cut short keeps what it measured
    report = build(partial=False)
    for row in rows:
        print(render_operator(row), file=sys.stderr)
    print(render_table(report), file=sys.stderr)
    if args.out:
        write_report(report, args.out)
        print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        print(report.model_dump_json(indent=2))
    return 0 if all(r.verified for r in rows) else 1
