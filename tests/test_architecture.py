"""docs/architecture.md's module map is the dependency rule: every import in bot/foundry is checked against the
row of the part it belongs to (other foundry parts and third-party libraries), and the one-importer-per-service
rules hold. Read from the page itself, so the page and the code cannot drift apart."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "bot" / "foundry"
PAGE = ROOT / "docs" / "architecture.md"
ROW = re.compile(r"^\| `(?P<part>[\w_]+)` \| [^|]+ \| (?P<parts>[^|]+) \| (?P<libs>[^|]+) \|$")
SOLE_IMPORTERS = {  # library → the only files (relative to bot/foundry) or folders that may import it
    "openai": ("writers/llm.py",),
    "github": ("github/api.py",),
    "duckdb": ("experience/",),
    "ray": ("evolve/ray_executor.py",),
}


def names(cell: str) -> set[str]:
    return {n.strip() for n in cell.split(",") if n.strip() not in ("", "—")}


def module_map() -> dict[str, tuple[set[str], set[str]]]:
    rows = {}
    for line in PAGE.read_text().splitlines():
        match = ROW.match(line.strip())
        if match:
            rows[match["part"]] = (names(match["parts"]), names(match["libs"]))
    return rows


def part_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_the_page_lists_every_part_of_the_package():
    rows = module_map()
    parts = {part_of(p) for p in sources()} - {"__init__"}
    assert rows, "docs/architecture.md has no module map table"
    missing, gone = sorted(parts - set(rows)), sorted(set(rows) - parts)
    assert not missing and not gone, f"parts missing from the page: {missing}; rows without a part: {gone}"


def violations(path: Path, part: str, rows: dict[str, tuple[set[str], set[str]]]) -> list[str]:
    allowed_parts, allowed_libs = rows[part]
    broken = []
    for module in sorted(imports(path)):
        top = module.split(".")[0]
        if top == "foundry":
            target = module.split(".")[1] if "." in module else ""
            if target and target != part and target not in allowed_parts:
                broken.append(f"{part}: {path.name} imports {module}")
        elif top not in sys.stdlib_module_names and top not in allowed_libs and top != "__future__":
            broken.append(f"{part}: {path.name} imports the library {top}")
    return broken


def test_every_import_is_allowed_by_its_row():
    rows = module_map()
    broken = [v for path in sources() if part_of(path) != "__init__" for v in violations(path, part_of(path), rows)]
    assert not broken, "imports the module map in docs/architecture.md does not allow:\n" + "\n".join(broken)


def test_one_importer_per_external_service():
    broken = []
    for path in sources():
        rel = path.relative_to(PACKAGE).as_posix()
        for module in imports(path):
            owners = SOLE_IMPORTERS.get(module.split(".")[0])
            if owners and not any(rel == o or (o.endswith("/") and rel.startswith(o)) for o in owners):
                broken.append(f"{rel} imports {module} (only {', '.join(owners)} may)")
    assert not broken, "\n".join(broken)


def test_the_check_rejects_a_forbidden_import(tmp_path):
    rows = module_map()
    probe = tmp_path / "probe.py"
    probe.write_text("import torch\nimport openai\nfrom foundry.github import api\nfrom foundry.core import records\n")
    assert violations(probe, "evaluate", rows) == [
        "evaluate: probe.py imports foundry.github",
        "evaluate: probe.py imports the library openai",
    ]
