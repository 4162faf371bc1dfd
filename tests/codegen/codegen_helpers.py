"""Helpers for codegen tests: requests for the template writer, verdicts of the real evaluator."""

from __future__ import annotations

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


def evaluate(path: Path, source: str, cid: str = "c") -> Verdict:
    evaluator = CandidateEvaluator(load_operator(str(path)), policy="strict", config=EvaluatorConfig(trials=1))
    return evaluator.evaluate(Candidate(id=cid, source=source, writer="template"))


def explain(verdict: Verdict) -> str:
    return "\n".join(d.headline() + "\n" + d.evidence for d in verdict.diagnoses)


__all__ = ["Candidate"]
