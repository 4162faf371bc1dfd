"""Dependency rules of DESIGN §1 for the bot's side: PyGithub only in foundry/github; report/ sees
core only; github/ never reaches into the evaluator, the optimizer, the writers or the library."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "bot" / "foundry"


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def modules(sub: str = "") -> list[Path]:
    return sorted((PACKAGE / sub).rglob("*.py"))


def test_pygithub_only_in_the_github_package() -> None:
    for path in modules():
        uses = {m for m in imports(path) if m == "github" or m.startswith("github.")}
        if uses:
            assert path.parent == PACKAGE / "github", f"{path.relative_to(PACKAGE)} imports PyGithub"


def test_report_depends_on_core_only() -> None:
    for path in modules("report"):
        own = {m for m in imports(path) if m.startswith("foundry")}
        assert all(m.startswith(("foundry.core", "foundry.report")) for m in own), (path.name, own)


def test_github_package_stays_on_its_side() -> None:
    banned = ("foundry.evaluate", "foundry.evolve", "foundry.writers", "foundry.experience", "foundry.spec", "torch")
    for path in modules("github"):
        bad = {m for m in imports(path) if m.startswith(banned)}
        assert not bad, f"{path.name} imports {bad}"
