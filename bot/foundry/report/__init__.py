"""Reports: RunReport → a small IR (report.ir) → Markdown (report.md, PR body, job summary) or JSON.

render_report_markdown(report)      report.md
render_pr_body(report, marker)      the pull request body, with the hidden marker first
render_report_json(report)          the report record and its document, as one JSON document
"""

from __future__ import annotations

import json

from foundry.core.records import RunReport
from foundry.report.build import NOT_MEASURED, build_document, headline, named_checks
from foundry.report.ir import Document
from foundry.report.markdown import code_span, escape, render_markdown

PR_BODY_LIMIT = 60_000  # GitHub refuses bodies over 65,536 characters; keep a margin

__all__ = [
    "NOT_MEASURED",
    "Document",
    "build_document",
    "code_span",
    "escape",
    "headline",
    "named_checks",
    "render_markdown",
    "render_pr_body",
    "render_report_json",
    "render_report_markdown",
]


def render_report_markdown(report: RunReport) -> str:
    return render_markdown(build_document(report, include_source=True))


def render_pr_body(report: RunReport, marker: str, *, footer: str = "") -> str:
    """The PR body: marker, report (the kernel is in the diff, so its source is left out), footer."""
    if not (marker.startswith("<!--") and marker.endswith("-->")):
        raise ValueError("the marker must be an HTML comment, so that it stays hidden")
    body = render_markdown(build_document(report, include_source=False), title_level=0)
    tail = "\n---\n" + footer.strip() + "\n" if footer.strip() else ""
    text = f"{marker}\n{body}{tail}"
    if len(text) > PR_BODY_LIMIT:
        cut = PR_BODY_LIMIT - len(marker) - len(tail) - 200
        text = f"{marker}\n{body[:cut]}\n\n… (report cut to fit a pull request; report.md has all of it)\n{tail}"
    return text


def render_report_json(report: RunReport) -> str:
    """report.json for machines: the record itself plus the rendered document parts."""
    document = build_document(report, include_source=False)
    return json.dumps(
        {"report": report.model_dump(mode="json"), "document": document.model_dump(mode="json")},
        indent=2,
    )
