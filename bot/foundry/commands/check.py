"""`foundry check OPERATOR CANDIDATE [--policy strict|hybrid] [--json]`

Verify one candidate kernel against an operator, as `optimize` verifies each of its candidates. Without a
GPU the candidate runs under the Triton interpreter, and a verified kernel is also compiled for sm_90.
Exit 0 verified · 1 rejected (any failure kind) · 2 bad input."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from foundry.commands.operator_args import add_operator_arguments, load_from_args
from foundry.commands.optimize import POLICY_HELP, static_compile_available
from foundry.core.errors import FatalError
from foundry.core.records import Candidate, Verdict

if TYPE_CHECKING:
    from foundry.spec.loader import LoadedOperator


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("check", help="verify one candidate kernel against an operator", description=__doc__)
    parser.add_argument("operator", help="path/to/file.py or path/to/file.py::ClassName")
    parser.add_argument("candidate", help="a Python file defining ModelNew with Triton kernels")
    add_operator_arguments(parser)
    parser.add_argument("--policy", choices=("strict", "hybrid"), default="strict", help=POLICY_HELP)
    parser.add_argument(
        "--trials", type=int, default=None, help="correctness trials (default: the precision's, rules/tolerance.yaml)"
    )
    parser.add_argument(
        "--timeout", type=float, default=None, help="seconds per candidate (default: 600 on CPU, 180 on a GPU)"
    )
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON on stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig

    operator = load_from_args(args)
    check_reference(operator)
    path = Path(args.candidate)
    try:
        source = path.read_text()
    except OSError as exc:
        raise FatalError(f"{path}: cannot read candidate: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise FatalError(f"{path}: candidate is not UTF-8 text") from exc
    candidate = Candidate(id=hashlib.sha256(source.encode()).hexdigest()[:12], source=source, writer="manual")
    # Without a GPU, a verified kernel is also compiled for sm_90, as in `optimize`: a kernel that runs under the
    # interpreter but not on the GPU (shared memory, compiler errors) is rejected here too.
    config = EvaluatorConfig(trials=args.trials, timeout_s=args.timeout, static_compile=static_compile_available())
    evaluator = CandidateEvaluator(operator, policy=args.policy, config=config)
    print(f"checking {path} against {operator.spec.ref} ({args.policy}, {evaluator.device_name}) …", file=sys.stderr)
    verdict = evaluator.evaluate(candidate)
    print(render_verdict(verdict), file=sys.stderr)
    if args.json:
        print(verdict.model_dump_json(indent=2))
    return 0 if verdict.verified else 1


def check_reference(operator: LoadedOperator) -> None:
    """Run the reference once at the shapes the evaluator uses: an operator that does not run is the user's
    input to fix (exit 2 naming it), not the candidate's failure."""
    import torch

    from foundry.spec.signature import signature_of

    signature_of(operator, small=not torch.cuda.is_available())


def render_verdict(verdict: Verdict) -> str:
    from foundry.report import named_checks

    lines = []
    if verdict.verified:
        lines.append(
            f"VERIFIED  {verdict.candidate_id}  ({verdict.device}, policy {verdict.policy}, "
            f"{verdict.triton_launches} Triton launches)"
        )
        for check in named_checks(verdict):
            lines.append(f"  ✓ {check}")
    else:
        failure = verdict.failure
        assert failure is not None
        lines.append(f"REJECTED  {verdict.candidate_id}  {failure.headline()}")
        if failure.evidence:
            lines.append("  evidence:")
            lines.extend("    " + line for line in failure.evidence.splitlines()[-15:])
    for warning in verdict.warnings:
        lines.append(f"  ! {warning.headline()}")
    timing = verdict.timing
    if timing is not None:
        if timing.measured:
            parts = [f"foundry {timing.candidate_ms:.4f} ms", f"eager {timing.eager_ms:.4f} ms"]
            if timing.compile_ms:
                parts.append(f"torch.compile {timing.compile_ms:.4f} ms")
            if timing.speedup_eager:
                parts.append(f"{timing.speedup_eager:.2f}× vs eager")
            if timing.speedup_compile:
                parts.append(f"{timing.speedup_compile:.2f}× vs compile")
            lines.append("  timing: " + ", ".join(parts))
            if timing.roofline:
                r = timing.roofline
                lines.append(
                    f"  roofline: {r.pct_of_floor:.0f}% of floor ({r.bound}-bound, {r.bytes_moved} bytes, "
                    f"{r.flops} FLOPs)"
                )
        else:
            lines.append(f"  timing: {timing.reason}")
    for k in verdict.kernels:
        lines.append(f"  kernel {k.name}: registers {k.registers}, spills {k.spills}, shared {k.shared_bytes} B")
    return "\n".join(lines)
