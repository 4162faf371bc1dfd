"""Texts the bot posts: the status comment (one per triggering comment, edited in place), replies,
and the job summary. Event text never lands here unescaped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from foundry.core.records import RunReport
from foundry.github.publish import REPORTED, Outcome
from foundry.report import build_document as _build
from foundry.report import code_span, escape, headline, render_markdown


def status_marker(comment_id: int) -> str:
    return f"<!-- kernel-foundry:status comment={comment_id} -->"


def reply_marker(comment_id: int) -> str:
    return f"<!-- kernel-foundry:reply comment={comment_id} -->"


RUNNING = "is optimizing"


def run_marker(run_id: str) -> str:
    """Which workflow run a running status comment belongs to (what `/foundry stop` cancels)."""
    return f"<!-- kernel-foundry:run id={run_id} -->" if run_id.isdigit() else ""


def stopped_body(login: str, *, run_url: str) -> str:
    where = f" ([workflow run]({run_url}))" if run_url else ""
    return f"🛑 **Kernel Foundry** was stopped by @{login}{where}."


ICONS = {"done": "✅", "failed": "❌", "unfinished": "⏸️"}


def operator_lines(
    operators: Sequence[str],
    *,
    results: Mapping[str, str] | None = None,
    current: str | None = None,
    detail: str = "",
    pending: str = "⏸️",
) -> str:
    """One line per operator: what became of it (results: ref → done | failed | unfinished), ⏳ for the one
    being optimized (with detail, e.g. its generation), pending for the others."""
    lines = []
    for op in operators:
        found = (results or {}).get(op)
        if found is not None:
            icon = ICONS.get(found, "⏸️")
        elif op == current:
            icon = "⏳"
        else:
            icon = pending
        more = f" — {escape(detail)}" if op == current and detail and found is None else ""
        lines.append(f"- {icon} {code_span(op)}{more}")
    return "\n".join(lines)


def running_body(
    operators: Sequence[str],
    *,
    run_url: str,
    run_id: str = "",
    results: Mapping[str, str] | None = None,
    current: str | None = None,
    detail: str = "",
) -> str:
    """The status comment of the one-job form while it optimizes (the first operator is next at the start)."""
    if current is None and not results and operators:
        current = operators[0]
    listed = operator_lines(operators, results=results, current=current, detail=detail)
    where = f" ([workflow run]({run_url}))" if run_url else ""
    marker = run_marker(run_id)
    body = f"⏳ **Kernel Foundry** {RUNNING}{where}:\n\n{listed or '- (detecting operators)'}"
    return f"{body}\n{marker}" if marker else body


STAGES = ("triage", "optimize", "publish")
_STAGE_TEXT = {
    "triage": "triage: the operators to optimize",
    "optimize": "optimize on the GPU runner",
    "publish": "publish: pull requests",
}


def stages_body(
    operators: Sequence[str],
    *,
    stage: str,
    run_url: str,
    run_id: str = "",
    results: Mapping[str, str] | None = None,
    current: str | None = None,
    detail: str = "",
) -> str:
    """The status comment of the three-job workflow: which job the run is in, and per operator what the
    optimize job has finished (results: ref → done | failed | unfinished; None before it starts), the one it
    is optimizing now (current, with detail such as its generation) and those still waiting. Triage writes
    it, the optimize job moves it as it goes (where its token may edit comments), publish writes the rest."""
    now = STAGES.index(stage)
    steps = []
    for i, name in enumerate(STAGES):
        mark = "✅" if i < now else ("⏳" if i == now else "⏸️")
        text = _STAGE_TEXT[name]
        if name == "optimize" and results is not None:
            finished = sum(1 for r in results.values() if r == "done")
            text += f" ({finished} of {len(operators)} finished)"
        steps.append(f"{i + 1}. {mark} {text}")
    pending = "⏳" if stage == "optimize" and current is None else "⏸️"
    listed = operator_lines(operators, results=results, current=current, detail=detail, pending=pending)
    where = f" ([workflow run]({run_url}))" if run_url else ""
    body = f"⏳ **Kernel Foundry** {RUNNING}{where}:\n\n" + "\n".join(steps) + f"\n\n{listed}"
    marker = run_marker(run_id)
    return f"{body}\n{marker}" if marker else body


def outcome_line(outcome: Outcome) -> str:
    op = code_span(outcome.ref)
    if outcome.action in ("created", "updated") and outcome.pr_number is not None:
        gain = f", {outcome.speedup:.2f}× over eager ({REPORTED})" if outcome.speedup is not None else ""
        return f"🚀 {op}: pull request #{outcome.pr_number} {outcome.action}{gain}"
    if outcome.action == "rebuilt" and outcome.pr_number is not None:
        return f"🔁 {op}: pull request #{outcome.pr_number} rebuilt — {escape(outcome.reason)}"
    if outcome.action == "held":
        where = f" (pull request #{outcome.pr_number})" if outcome.pr_number is not None else ""
        return f"✋ {op}: not updated{where} — {escape(outcome.reason)}"
    if outcome.action == "failed":
        return f"❌ {op}: {escape(outcome.reason)}"
    return f"➖ {op}: no pull request — {escape(outcome.reason)}"


def final_body(outcomes: Sequence[Outcome], *, run_url: str, problem: str = "") -> str:
    where = f" ([workflow run]({run_url}))" if run_url else ""
    ok = any(o.action in ("created", "updated") for o in outcomes)
    head = "✅ **Kernel Foundry** finished" if ok and not problem else "😕 **Kernel Foundry** finished"
    lines = [f"{head}{where}.", ""]
    lines += [f"- {outcome_line(o)}" for o in outcomes]
    for o in outcomes:
        lines += [f"  - ⚠️ {escape(w)}" for w in o.warnings]
    if problem:
        lines += ["", f"**Problem:** {escape(problem)}"]
    if not outcomes and not problem:
        lines.append("No operator to optimize.")
    return "\n".join(lines)


def summary_markdown(outcomes: Sequence[Outcome], reports: Sequence[RunReport], *, problem: str = "") -> str:
    parts = ["# Kernel Foundry", ""]
    if problem:
        parts += [f"**Problem:** {escape(problem)}", ""]
    if outcomes:
        parts += [f"- {outcome_line(o)}" for o in outcomes] + [""]
    elif not reports and not problem:
        parts += ["No operator to optimize.", ""]
    for report in reports:
        parts.append(render_markdown(_build(report, include_source=False), title_level=2))
    return "\n".join(parts)


def reports_headlines(reports: Sequence[RunReport]) -> list[str]:
    return [headline(r) for r in reports]
