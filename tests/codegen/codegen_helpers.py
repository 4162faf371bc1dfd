"""Helpers for codegen tests: requests for the template writer, verdicts of the real evaluator."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from foundry.core.protocols import ProposalRequest
from foundry.core.records import Candidate, Verdict
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ops"
OPERATORS = Path(__file__).resolve().parent / "operators"


def request_for(path: Path, **kw: Any) -> ProposalRequest:
    op = load_operator(str(path))
    fields: dict[str, Any] = {
        "spec": op.spec,
        "operator_source": op.source,
        "expert": "fusion",
        "island": 0,
        "generation": 0,
        "count": 1,
        "seed": 0,
    }
    fields.update(kw)
    return ProposalRequest(**fields)


def evaluate(path: Path, source: str, cid: str = "c", static_compile: bool = False) -> Verdict:
    config = EvaluatorConfig(trials=1, static_compile=static_compile)
    evaluator = CandidateEvaluator(load_operator(str(path)), policy="strict", config=config)
    return evaluator.evaluate(Candidate(id=cid, source=source, writer="template"))


def header_genes(source: str) -> set[str]:
    """The `gene=value` settings the module docstring of a generated kernel names (each gene once)."""
    import ast
    import re as _re

    doc = ast.get_docstring(ast.parse(source)) or ""
    found = _re.findall(r"(?<![\w.])([a-z]+\.\w+=[^\s,]+?)(?=[,.]?(?:\s|$))", doc)
    assert len(found) == len({f.split("=")[0] for f in found}), f"a gene listed twice: {found}"
    return set(found)


def code(source: str) -> str:
    """The source in one canonical layout (ast.unparse: a statement per line however ruff wrapped it, single
    quotes, no comments), so that a test reads the code the writer emitted rather than its formatting."""
    import ast

    return ast.unparse(ast.parse(source))


def identifiers(source: str) -> set[str]:
    """Every name the code binds or reads (variables, arguments, functions, classes, attributes): what the code
    uses, whatever its docstrings and comments say."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            found.add(node.arg)
    return found


def module_doc(source: str) -> str:
    """The module docstring of a generated kernel with its line breaks as spaces (wrapping is formatting)."""
    import ast

    return " ".join((ast.get_docstring(ast.parse(source)) or "").split())


def launched_kinds(source: str) -> list[str]:
    """The kernel kinds of a candidate's launchers (conv, pool, col, pointwise, row, …) in the order they are
    defined (the plan's order), each read from its launcher's docstring ("Launch <what the kind does>; …")."""
    import ast

    from foundry.codegen.describe import KIND_WORDS

    kinds = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.FunctionDef) or node.decorator_list:
            continue
        doc = " ".join((ast.get_docstring(node) or "").split())
        if doc.startswith("Launch "):
            [kind] = [k for k, words in KIND_WORDS.items() if doc.startswith(f"Launch {words};")]
            kinds.append(kind)
    return kinds


def explain(verdict: Verdict) -> str:
    return "\n".join(d.headline() + "\n" + d.evidence for d in verdict.diagnoses)


__all__ = ["Candidate"]


ONE_LAUNCH_FACTS = """
import importlib.util, json, sys
from foundry.evaluate.static_compile import compile_facts
spec = importlib.util.spec_from_file_location("candidate", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
T = "tensor:torch.float32"
# group norm at its GPU size: 128 rows of 262,144, 32 tiles of 8192; G, CPG, HW; S, SPIN_LIMIT
args = (T, T, T, T, 1.0, 1.0, T, "tensor:torch.int32", 128, 262144, 8, 16, 16384, 32, 65536)
options = dict(BLOCK_M=1, BLOCK_N=8192, BLOCK_S=32, FB=256, CH_TILE=True, num_warps=4)
if len(sys.argv) > 2:
    options["maxnreg"] = int(sys.argv[2])
print(json.dumps(compile_facts(module._groupnorm_split_one_kernel, args, options)))
"""


def one_launch_facts(source_path: Path, maxnreg: int | None = None) -> dict[str, Any]:
    """Static sm_90 compile facts (registers, spills) of group norm's one-launch kernel in `source_path` at its GPU
    size (8192-wide tiles over 4 warps), compiled in a process of its own without the Triton interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    command = [sys.executable, "-c", ONE_LAUNCH_FACTS, str(source_path), *([str(maxnreg)] if maxnreg else [])]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
