"""Benchmark the template writer's kernels against eager PyTorch and torch.compile on a GPU.

Two steps, so the GPU machine needs only torch and triton:

    # on any machine with the bot installed: write candidates (defaults, 3xTF32 for matmuls, seeded
    # mutations from every expert) and a manifest
    PYTHONPATH=bot python tools/template_bench.py emit DIR examples/ops/*.py --candidates 6
    # on the GPU: check each candidate against the reference at full size (fp32 tolerance from rules/),
    # time it with CUDA events (median, L2 flushed between trials), and compare with eager and torch.compile
    python tools/template_bench.py run DIR [--budget-s 500] [--out table.json]

This is a quick tuning run over a handful of genes per operator, not the evaluator: `foundry bench` is the
command of record.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
import time
from pathlib import Path

import torch

EXPERTS = ("fusion", "memory_access", "tiling_launch", "compute_restructuring")


def emit(out: Path, operators: list[str], count: int) -> None:
    from foundry.core.protocols import ProposalRequest
    from foundry.rules.loader import load_rules
    from foundry.spec.loader import load_operator
    from foundry.writers.template import TemplateWriter, UnsupportedOperator

    writer = TemplateWriter()
    manifest = []
    out.mkdir(parents=True, exist_ok=True)
    for path in operators:
        op = load_operator(path)
        tol = load_rules().tolerance.for_precision(op.spec.precision)
        entry = {"operator": path, "atol": tol.atol, "rtol": tol.rtol, "candidates": []}
        seen: set[str] = set()
        try:
            for i, expert in enumerate(EXPERTS):
                per = max(1, count // len(EXPERTS)) + (2 if i == 0 else 0)
                req = ProposalRequest(
                    spec=op.spec, operator_source=op.source, expert=expert, island=i, generation=0, count=per, seed=7
                )
                for c in writer.propose(req):
                    if c.source in seen:
                        continue
                    seen.add(c.source)
                    name = f"{Path(path).stem}__{len(entry['candidates'])}.py"
                    (out / name).write_text(c.source)
                    entry["candidates"].append({"file": name, "genes": c.genes, "notes": c.notes})
        except UnsupportedOperator as exc:
            entry["error"] = str(exc)
        manifest.append(entry)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))


def import_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_ms(fn, flush: torch.Tensor, trials: int = 20) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def outputs(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def bench_one(entry: dict, root: Path, flush: torch.Tensor, deadline: float) -> dict:
    path = Path(entry["operator"])
    row = {"operator": path.stem, "verified": False}
    if "error" in entry:
        row["error"] = entry["error"]
        return row
    ref_mod = import_file(path, f"ref_{path.stem}")
    torch.manual_seed(0)
    ref = ref_mod.Model(*ref_mod.get_init_inputs()).cuda().eval()
    with torch.no_grad():
        for p in ref.parameters():
            p.add_(0.05 * torch.randn_like(p))
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ref_mod.get_inputs()]
    with torch.no_grad():
        expected = [t.clone() for t in outputs(ref(*inputs))]
        row["eager_ms"] = time_ms(lambda: ref(*inputs), flush)
    moved = sum(t.numel() * t.element_size() for t in inputs if isinstance(t, torch.Tensor))
    moved += sum(t.numel() * t.element_size() for t in expected)
    row["bytes_moved"] = moved
    results = []
    for cand in entry["candidates"]:
        if time.monotonic() > deadline:
            break
        result = {"genes": cand["genes"], "notes": cand["notes"]}
        try:
            module = import_file(root / cand["file"], cand["file"][:-3])
            new = module.ModelNew(*ref_mod.get_init_inputs()).cuda().eval()
            new.load_state_dict(ref.state_dict(), strict=True)
            with torch.no_grad():
                got = outputs(new(*inputs))
                ok = all(
                    g.shape == e.shape and torch.allclose(g.float(), e.float(), atol=entry["atol"], rtol=entry["rtol"])
                    for g, e in zip(got, expected, strict=True)
                )
                result["max_err"] = max(
                    float((g.double() - e.double()).abs().max()) for g, e in zip(got, expected, strict=True)
                )
                result["verified"] = bool(ok)
                if ok:
                    result["ms"] = time_ms(lambda model=new: model(*inputs), flush)
        except Exception as exc:  # a broken candidate is a row of the table, not the end of the run
            result["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        results.append(result)
    row["candidates"] = results
    good = [r for r in results if r.get("verified")]
    if good:
        best = min(good, key=lambda r: r["ms"])
        row.update(
            verified=True,
            best_ms=best["ms"],
            best_genes=best["genes"],
            speedup_eager=row["eager_ms"] / best["ms"],
            gbs=moved / best["ms"] / 1e6,
        )
    if time.monotonic() < deadline + 30:
        try:
            compiled = torch.compile(ref)
            with torch.no_grad():
                row["compile_ms"] = time_ms(lambda: compiled(*inputs), flush)
            if good:
                row["speedup_compile"] = row["compile_ms"] / row["best_ms"]
        except Exception as exc:
            row["compile_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    return row


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def run(root: Path, budget_s: float, out: str) -> None:
    import triton

    manifest = json.loads((root / "manifest.json").read_text())
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device="cuda")
    start = time.monotonic()
    rows = []
    for i, entry in enumerate(manifest):
        share = (budget_s - (time.monotonic() - start)) / (len(manifest) - i)
        try:
            rows.append(bench_one(entry, root, flush, time.monotonic() + share * 0.6))
        except Exception as exc:
            rows.append(
                {"operator": Path(entry["operator"]).stem, "verified": False, "error": f"{type(exc).__name__}: {exc}"}
            )
        r = rows[-1]
        fails = [c.get("error", "")[:80] for c in r.get("candidates", []) if not c.get("verified")]
        print(
            f"{r['operator']:<24} ok={r.get('verified')} eager={r.get('eager_ms', 0):.3f} "
            f"compile={r.get('compile_ms', 0):.3f} best={r.get('best_ms', 0):.3f} "
            f"x_eager={r.get('speedup_eager', 0):.2f} x_compile={r.get('speedup_compile', 0):.2f} "
            f"GB/s={r.get('gbs', 0):.0f} {r.get('error', '')} fails={fails[:2]}",
            flush=True,
        )
        torch.cuda.empty_cache()
    done = [r for r in rows if r.get("speedup_eager")]
    summary = {
        "date": time.strftime("%Y-%m-%d"),
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "geomean_eager": geomean([r["speedup_eager"] for r in done]),
        "geomean_compile": geomean([r["speedup_compile"] for r in done if r.get("speedup_compile")]),
        "verified": f"{sum(1 for r in rows if r.get('verified'))}/{len(rows)}",
    }
    print(json.dumps(summary))
    if out:
        Path(out).write_text(json.dumps({**summary, "rows": rows}, indent=1, default=str))


def table(path: Path) -> str:
    """The run's JSON → a Markdown table (per operator, then the aggregate)."""
    data = json.loads(path.read_text())
    lines = [
        f"Template writer on {data['gpu']} — {data['date']}, torch {data['torch']}, triton {data['triton']}.",
        "Best of the candidates tried per operator (fp32, checked at full size against the reference).",
        "",
        "| operator | verified | eager ms | torch.compile ms | foundry ms | × eager | × compile | GB/s | tried |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in data["rows"]:

        def f(key: str, fmt: str = ".3f", r: dict = r) -> str:
            return format(r[key], fmt) if r.get(key) is not None else "–"

        tried = len(r.get("candidates", []))
        lines.append(
            f"| {r['operator']} | {'yes' if r.get('verified') else 'no'} | {f('eager_ms')} | {f('compile_ms')} | "
            f"{f('best_ms')} | {f('speedup_eager', '.2f')} | {f('speedup_compile', '.2f')} | {f('gbs', '.0f')} | "
            f"{tried} |"
        )
    lines += [
        "",
        f"Geometric mean speedup: {data['geomean_eager']:.2f}× over eager, "
        f"{data['geomean_compile']:.2f}× over torch.compile; verified {data['verified']}.",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="step", required=True)
    e = sub.add_parser("emit")
    e.add_argument("dir")
    e.add_argument("operators", nargs="+")
    e.add_argument("--candidates", type=int, default=6)
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--budget-s", type=float, default=500)
    r.add_argument("--out", default="")
    t = sub.add_parser("table")
    t.add_argument("json")
    args = parser.parse_args()
    if args.step == "table":
        print(table(Path(args.json)), end="")
        return 0
    if args.step == "emit":
        emit(Path(args.dir), args.operators, args.candidates)
    else:
        run(Path(args.dir), args.budget_s, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
