"""Benchmark the template writer's kernels against eager PyTorch and torch.compile on a GPU.

    PYTHONPATH=bot python examples/ops/bench/template_bench.py examples/ops/*.py \
        [--candidates 6] [--budget-s 500] [--out bench.json]

For each operator: the writer proposes candidates (defaults, 3xTF32 for matmuls, seeded mutations from
every expert); each is checked against the reference at full size (fp32 tolerance from rules/) and
timed with CUDA events (median, L2 flushed between trials); the fastest verified one is reported
next to eager and torch.compile. This is a quick tuning run, not the full evaluator: `foundry bench`
is the command of record.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import torch
import triton
from foundry.core.protocols import ProposalRequest
from foundry.rules.loader import load_rules
from foundry.spec.loader import load_operator
from foundry.writers.template import TemplateWriter, UnsupportedOperator

EXPERTS = ("fusion", "memory_access", "tiling_launch", "compute_restructuring")
FLUSH = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda") if torch.cuda.is_available() else None


def time_ms(fn, trials: int = 20) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        FLUSH.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def load_source(source: str, tag: str):
    path = Path(tempfile.mkdtemp()) / f"cand_{tag}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"cand_{tag}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def outputs(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def bench(path: str, writer: TemplateWriter, count: int, deadline: float) -> dict:
    op = load_operator(path)
    row = {"operator": Path(path).stem, "verified": False}
    tol = load_rules().tolerance.for_precision(op.spec.precision)
    torch.manual_seed(0)
    ref = op.build().cuda().eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(0.05 * torch.randn_like(p))
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in op.inputs()]
    with torch.no_grad():
        expected = [t.clone() for t in outputs(ref(*inputs))]
        row["eager_ms"] = time_ms(lambda: ref(*inputs))
    moved = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
    moved += sum(t.numel() * t.element_size() for t in expected)
    row["bytes_moved"] = moved
    try:
        candidates = []
        for i, expert in enumerate(EXPERTS):
            req = ProposalRequest(
                spec=op.spec,
                operator_source=op.source,
                expert=expert,
                island=i,
                generation=0,
                count=max(1, count // len(EXPERTS) + (2 if i == 0 else 0)),
                seed=7,
            )
            candidates += [c for c in writer.propose(req) if c.id not in {x.id for x in candidates}]
    except UnsupportedOperator as exc:
        row["error"] = str(exc)
        return row
    results = []
    for c in candidates:
        if time.monotonic() > deadline:
            break
        entry = {"genes": c.genes, "notes": c.notes}
        try:
            module = load_source(c.source, c.id.replace("-", "_"))
            new = module.ModelNew(*op.init_inputs()).cuda().eval()
            new.load_state_dict(ref.state_dict(), strict=True)
            with torch.no_grad():
                got = outputs(new(*inputs))
                ok = all(
                    g.shape == e.shape and torch.allclose(g.float(), e.float(), atol=tol.atol, rtol=tol.rtol)
                    for g, e in zip(got, expected, strict=True)
                )
                entry["max_err"] = max(
                    float((g.double() - e.double()).abs().max()) for g, e in zip(got, expected, strict=True)
                )
                entry["verified"] = bool(ok)
                if ok:
                    entry["ms"] = time_ms(lambda model=new: model(*inputs))
        except Exception as exc:  # a broken candidate is a result here, not a crash of the run
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        results.append(entry)
    good = [r for r in results if r.get("verified")]
    row["candidates"] = results
    if good:
        best = min(good, key=lambda r: r["ms"])
        row.update(
            verified=True,
            best_ms=best["ms"],
            best_genes=best["genes"],
            speedup_eager=row["eager_ms"] / best["ms"],
            gbs=moved / best["ms"] / 1e6,
        )
    if time.monotonic() < deadline:
        try:
            compiled = torch.compile(ref)
            with torch.no_grad():
                row["compile_ms"] = time_ms(lambda: compiled(*inputs))
            if good:
                row["speedup_compile"] = row["compile_ms"] / row["best_ms"]
        except Exception as exc:
            row["compile_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return row


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("operators", nargs="+")
    parser.add_argument("--candidates", type=int, default=6)
    parser.add_argument("--budget-s", type=float, default=500)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    writer = TemplateWriter()
    start = time.monotonic()
    rows = []
    for i, path in enumerate(args.operators):
        left = args.budget_s - (time.monotonic() - start)
        share = left / (len(args.operators) - i)
        try:
            rows.append(bench(path, writer, args.candidates, time.monotonic() + share * 0.7))
        except Exception as exc:
            rows.append({"operator": Path(path).stem, "verified": False, "error": f"{type(exc).__name__}: {exc}"})
        r = rows[-1]
        print(
            f"{r['operator']:<24} ok={r.get('verified')} eager={r.get('eager_ms', 0):.3f} "
            f"compile={r.get('compile_ms', 0):.3f} best={r.get('best_ms', 0):.3f} "
            f"x_eager={r.get('speedup_eager', 0):.2f} x_compile={r.get('speedup_compile', 0):.2f} "
            f"GB/s={r.get('gbs', 0):.0f} {r.get('error', '')}",
            flush=True,
        )
        torch.cuda.empty_cache()
    done = [r for r in rows if r.get("speedup_eager")]
    summary = {
        "date": time.strftime("%Y-%m-%d"),
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "rows": rows,
        "geomean_eager": math.exp(sum(math.log(r["speedup_eager"]) for r in done) / len(done)) if done else None,
        "geomean_compile": (
            math.exp(
                sum(math.log(r["speedup_compile"]) for r in done if r.get("speedup_compile"))
                / max(1, sum(1 for r in done if r.get("speedup_compile")))
            )
        ),
    }
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
