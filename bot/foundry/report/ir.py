"""A small report IR: a document is a tuple of parts, each rendered per medium (Markdown, JSON).

Parts carry data, not formatting: the renderers decide how a table or a chart looks in a PR body,
a job summary or report.json.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Part(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Heading(Part):
    kind: Literal["heading"] = "heading"
    text: str
    level: int = Field(default=2, ge=1, le=6)


class Text(Part):
    """A paragraph of Markdown-safe prose (the builder escapes what came from outside)."""

    kind: Literal["text"] = "text"
    text: str


class Bullets(Part):
    kind: Literal["bullets"] = "bullets"
    items: tuple[str, ...]


class Table(Part):
    kind: Literal["table"] = "table"
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: tuple[Literal["left", "right", "center"], ...] = ()


class Code(Part):
    kind: Literal["code"] = "code"
    text: str
    language: str = ""


class LineChart(Part):
    """A line chart (rendered as a mermaid xychart in Markdown)."""

    kind: Literal["chart"] = "chart"
    title: str
    x_label: str
    y_label: str
    x: tuple[str, ...]
    series: tuple[float, ...]


class Details(Part):
    """A collapsible section."""

    kind: Literal["details"] = "details"
    summary: str
    parts: tuple[AnyPart, ...]


AnyPart = Heading | Text | Bullets | Table | Code | LineChart | Details


class Document(Part):
    title: str
    parts: tuple[AnyPart, ...] = ()


Details.model_rebuild()
Document.model_rebuild()
