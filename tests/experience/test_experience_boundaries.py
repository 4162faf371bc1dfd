"""Module boundaries of the experience library (DESIGN.md §1): the only importer of duckdb, and it
depends on core only."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "bot" / "foundry"


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_only_the_experience_package_imports_duckdb() -> None:
    importers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if any(name == "duckdb" or name.startswith("duckdb.") for name in imported_modules(path))
    }
    assert importers and all(name.startswith("experience/") for name in importers), importers


def test_experience_depends_on_core_only() -> None:
    for path in (PACKAGE / "experience").glob("*.py"):
        foundry = {name for name in imported_modules(path) if name.split(".")[0] == "foundry"}
        allowed = {"foundry", "foundry.core.errors", "foundry.core.records", "foundry.core.protocols"}
        outside = {name for name in foundry - allowed if not name.startswith("foundry.experience")}
        assert not outside, f"{path.name} imports {outside}"
        assert not any(name.split(".")[0] == "torch" for name in imported_modules(path)), path.name
