"""The writer of generated files: an indented buffer of lines, docstrings, and `ruff format` when ruff is there.

The buffer's lines are built from values (node names are the IR's, chosen in capture.py with
ir.usable_name): nothing here rewrites emitted text.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

LINE_LENGTH = 120


class Source:
    """Lines at an indentation level: `line` adds one, `block` indents what is written inside it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def line(self, text: str = "") -> None:
        self.lines.extend(("    " * self.depth + part) if part else "" for part in text.split("\n"))

    def extend(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def docstring(self, text: str) -> None:
        """A triple-quoted docstring: one line when it fits, else a summary line, its body and the closing quotes."""
        width = LINE_LENGTH - 4 * self.depth - 3  # the opening quotes
        lines = [part for line in text.strip("\n").split("\n") for part in wrapped(line, width)]
        if len(lines) == 1 and len(lines[0]) + 6 <= width:
            self.line(f'"""{lines[0]}"""')
            return
        self.line(f'"""{lines[0]}')
        self.extend(lines[1:])
        self.line('"""')

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        self.line(header)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def text(self) -> str:
        return "\n".join(self.lines)


def wrapped(line: str, width: int) -> list[str]:
    """A docstring line cut at spaces to `width`, continuation lines at its own indentation."""
    if len(line) <= width:
        return [line]
    lead = line[: len(line) - len(line.lstrip())]
    return textwrap.wrap(line, width, initial_indent="", subsequent_indent=lead, break_on_hyphens=False) or [line]


def with_docstring(function: str, doc: str) -> str:
    """A function's source (`def ...:` on one line, as the emitters write it) with `doc` as its docstring."""
    head, _, body = function.partition("\n")
    if not head.lstrip().startswith("def "):  # a decorator line first
        deco = head
        head, _, body = body.partition("\n")
        head = deco + "\n" + head
    out = Source()
    out.depth = 1
    out.docstring(doc)
    return f"{head}\n{out.text()}\n{body}"


@functools.cache
def ruff_command() -> tuple[str, ...] | None:
    """How to run ruff here (its binary, or the ruff module of this Python), or None without it."""
    found = shutil.which("ruff")
    if found:
        return (found,)
    if importlib.util.find_spec("ruff") is None:
        return None
    return (sys.executable, "-m", "ruff")


@functools.lru_cache(maxsize=512)
def formatted(text: str) -> str:
    """`text` through `ruff format` (line length 120, no project configuration), or as it is when ruff is
    absent or refuses it (the emitters keep their own lines valid Python)."""
    command = ruff_command()
    if command is None:
        return text
    args = [*command, "format", "--isolated", "--line-length", str(LINE_LENGTH), "--stdin-filename", "kernel.py", "-"]
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT")}
    try:
        done = subprocess.run(args, input=text, capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("ruff format did not run (%s): the kernel is kept as emitted", exc)
        return text
    if done.returncode != 0:
        log.warning("ruff format refused the kernel (%s): kept as emitted", done.stderr.strip()[:300])
        return text
    return done.stdout
