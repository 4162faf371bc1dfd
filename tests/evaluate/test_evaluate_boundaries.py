"""DESIGN §1: the trust core never imports the front ends, the writers, the optimizer or the experience
library; the worker that runs untrusted candidates imports only stdlib, torch, triton and its own
helpers. Checked on the source (AST), not by hope."""

import ast
from pathlib import Path

EVALUATE = Path(__file__).resolve().parents[2] / "bot" / "foundry" / "evaluate"
FORBIDDEN = (
    "foundry.github",
    "foundry.writers",
    "foundry.evolve",
    "foundry.experience",
    "foundry.action",
    "foundry.commands",
    "foundry.report",
    "github",
    "openai",
    "duckdb",
    "ray",
)
WORKER_SIDE = (
    "worker.py",
    "runtime_guard.py",
    "timing.py",
    "static_compile.py",
    "exchange.py",
    "jobfiles.py",
    "landlock.py",
    "gradients.py",
)
WORKER_ALLOWED = (
    "foundry.evaluate.runtime_guard",
    "foundry.evaluate.exchange",
    "foundry.evaluate.jobfiles",
    "foundry.evaluate.landlock",
    "foundry.evaluate.timing",
    "foundry.evaluate.static_compile",
    "foundry.evaluate.gradients",
    "foundry.evaluate",
)


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_evaluate_imports_no_front_end_writer_optimizer_or_library():
    for path in EVALUATE.glob("*.py"):
        bad = {n for n in imports(path) if n.startswith(FORBIDDEN)}
        assert not bad, f"{path.name} imports {sorted(bad)}"


def test_worker_side_imports_only_stdlib_torch_triton():
    import sys

    for name in WORKER_SIDE:
        for module in imports(EVALUATE / name):
            top = module.split(".")[0]
            assert top in sys.stdlib_module_names or top in ("torch", "triton") or module in WORKER_ALLOWED, (
                f"{name} imports {module}: the worker must stay light (no pydantic, no foundry.core)"
            )
