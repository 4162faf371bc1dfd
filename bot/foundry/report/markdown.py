"""Render the report IR to GitHub-flavoured Markdown (report.md, PR bodies, job summaries)."""

from __future__ import annotations

import re

from foundry.report.ir import (
    AnyPart,
    Bullets,
    Code,
    Details,
    Document,
    Heading,
    LineChart,
    Table,
    Text,
)

_INLINE_SPECIALS = re.compile(r"([\\`*_\[\]|#~])")


def escape(text: str) -> str:
    """Make text from outside (operator names, diagnosis messages, LLM output) inert in Markdown:
    no HTML, no hidden markers, no @-mentions, no emphasis or table breaks; one line."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _INLINE_SPECIALS.sub(r"\\\1", text)
    text = text.replace("@", "&#64;")
    return " ".join(text.split())


def code_span(text: str) -> str:
    """Inline code that survives backticks inside (and stays on one line)."""
    text = " ".join(text.split())
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    return "`" * max(3, longest + 1)


def _table(part: Table) -> str:
    def cell(value: str) -> str:
        return value.replace("\n", " ").replace("|", "\\|")

    align = {"left": ":---", "right": "---:", "center": ":---:"}
    aligns = [align[a] for a in part.align] + ["---"] * (len(part.headers) - len(part.align))
    lines = ["| " + " | ".join(cell(h) for h in part.headers) + " |", "| " + " | ".join(aligns) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in part.rows]
    return "\n".join(lines)


def _chart(part: LineChart) -> str:
    def quoted(text: str) -> str:
        return '"' + text.replace('"', "'") + '"'

    xs = ", ".join(quoted(x) for x in part.x)
    ys = ", ".join(f"{y:.4g}" for y in part.series)
    low = min(part.series, default=0.0)
    high = max(part.series, default=1.0)
    if high <= low:
        high = low + 1.0
    return "\n".join(
        [
            "```mermaid",
            "xychart-beta",
            f"    title {quoted(part.title)}",
            f"    x-axis {quoted(part.x_label)} [{xs}]",
            f"    y-axis {quoted(part.y_label)} {min(0.0, low):.4g} --> {high * 1.1:.4g}",
            f"    line [{ys}]",
            "```",
        ]
    )


def render_part(part: AnyPart) -> str:
    if isinstance(part, Heading):
        return "#" * part.level + " " + part.text
    if isinstance(part, Text):
        return part.text
    if isinstance(part, Bullets):
        return "\n".join(f"- {item}" for item in part.items)
    if isinstance(part, Table):
        return _table(part)
    if isinstance(part, Code):
        fence = _fence(part.text)
        return f"{fence}{part.language}\n{part.text.rstrip()}\n{fence}"
    if isinstance(part, LineChart):
        return _chart(part)
    if isinstance(part, Details):
        inner = "\n\n".join(render_part(p) for p in part.parts)
        return f"<details>\n<summary>{part.summary}</summary>\n\n{inner}\n\n</details>"
    raise TypeError(f"unknown report part {type(part).__name__}")


def render_markdown(document: Document, *, title_level: int = 1) -> str:
    blocks = [] if title_level == 0 else ["#" * title_level + " " + document.title]
    blocks += [render_part(p) for p in document.parts]
    return "\n\n".join(blocks).rstrip() + "\n"
