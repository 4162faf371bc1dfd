"""Dependency rules of the optimizer, checked on the source (AST), not by hope."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "bot" / "foundry"


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_evolve_sees_other_parts_only_through_core_protocols():
    allowed = ("foundry.core", "foundry.evolve", "foundry.rules")
    for path in sorted((PACKAGE / "evolve").glob("*.py")):
        foreign = {n for n in imports_of(path) if n.startswith("foundry.") and not n.startswith(allowed)}
        assert not foreign, f"{path.name} imports {sorted(foreign)}"
        assert not {n.split(".")[0] for n in imports_of(path)} & {"torch", "triton", "openai", "duckdb", "github"}


def test_only_the_llm_writer_imports_openai():
    importers = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if any(n == "openai" or n.startswith("openai.") for n in imports_of(p))
    )
    assert importers == ["writers/llm.py"]


def test_the_llm_writer_does_not_reach_into_evolve_or_the_evaluator():
    names = imports_of(PACKAGE / "writers" / "llm.py")
    assert not {n for n in names if n.startswith(("foundry.evolve", "foundry.evaluate", "foundry.experience"))}
