"""The same seeded search with the local and the Ray executor, side by side.

    # CPU (Triton interpreter), 2 workers each; Ray starts a local instance
    python tools/executor_bench.py tests/cheats/operators/softmax_rows.py --budget 8 --workers 2
    # single-GPU machine: the local GPU slot against one Ray GPU actor
    python tools/executor_bench.py examples/ops/softmax.py --budget 16 --gpus 1 --out gpu.json
    # an existing cluster
    python tools/executor_bench.py OP.py --executors ray --ray-address ray://head:10001

Per executor: start-up (the evaluator, or ray.init and the actors), the search's wall time (proposals,
evaluations, re-verification of the finalist), candidates per minute, and the overhead per candidate:
the time the driver waited for one evaluation minus the time the evaluator itself reports
(Verdict.wall_s), the median over --repeats evaluations of the search's best candidate (the first
candidate when none was verified). Both searches use the same seed, so they propose the same candidates
as long as selection sees the same scores: under the interpreter (static cost model) the lists must be
identical; on a GPU, parents are chosen by measured speedups, which differ run to run, so later
generations may diverge. Either way every candidate both executors evaluated must get the same verdict.
The experience library is not used (a run must not seed the next).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

log = logging.getLogger("executor_bench")


class Timeline:
    """Wraps an executor to record each batch the search hands it: its size, its wall time and the sum of
    the evaluator's own times (Verdict.wall_s). Their ratio is the concurrency the executor achieved."""

    def __init__(self, executor: Any) -> None:
        self.executor = executor
        self.batches: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.executor, name)

    def evaluate_all(self, candidates: Any, on_done: Any = None) -> Any:
        started = time.monotonic()
        verdicts = self.executor.evaluate_all(candidates, on_done=on_done)
        wall = time.monotonic() - started
        busy = sum(v.wall_s for v in verdicts)
        self.batches.append(
            {
                "size": len(candidates),
                "wall_s": round(wall, 2),
                "evaluator_s": round(busy, 2),
                "concurrency": round(busy / wall, 2) if wall > 0 else None,
            }
        )
        return verdicts


def bench_one(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    from foundry.commands.optimize import SearchOptions, build_executor, build_writers, load_roles
    from foundry.evolve import Budget, Optimizer, SearchConfig
    from foundry.spec.loader import load_operator

    loaded = load_operator(args.operator)
    options = SearchOptions(
        budget=args.budget,
        islands=args.islands,
        seed=args.seed,
        workers=args.workers,
        gpus=args.gpus,  # the local executor: one evaluator per GPU, on this many
        experience=False,
        executor=kind,
        ray_address=args.ray_address,
    )
    roles = load_roles()
    writers = build_writers("template", loaded, roles, options)
    started = time.monotonic()
    if kind == "ray" and args.gpus is not None:
        from foundry.commands.optimize import EvaluatorRecipe
        from foundry.evaluate.evaluator import GPU_SEARCH_CONCURRENCY
        from foundry.evolve.ray_executor import RayExecutor

        path = str(loaded.path.resolve())
        concurrency = args.workers or GPU_SEARCH_CONCURRENCY  # per GPU actor, as the local executor per GPU
        recipe = EvaluatorRecipe(loaded.spec, loaded.source, path, options.policy, concurrency)
        executor = RayExecutor(recipe, address=args.ray_address, gpus=args.gpus, cpu_workers=args.workers)
        device = executor.device_name
    else:
        executor, device = build_executor(loaded, options)
    startup_s = time.monotonic() - started
    config = SearchConfig(islands=args.islands, budget=Budget(candidates=args.budget), seed=args.seed)
    started = time.monotonic()
    timeline = Timeline(executor)
    result = Optimizer(loaded.spec, loaded.source, writers, timeline, roles, config).run()
    search_s = time.monotonic() - started

    probe = result.best.candidate if result.best else result.entries[0].candidate
    overheads, evaluator_s = [], []
    for _ in range(args.repeats):
        t0 = time.monotonic()
        (verdict,) = executor.evaluate_all([probe])
        waited = time.monotonic() - t0
        overheads.append(waited - verdict.wall_s)
        evaluator_s.append(verdict.wall_s)
    row = {
        "executor": kind,
        "device": device,
        "workers": executor.workers,
        "startup_s": round(startup_s, 2),
        "search_s": round(search_s, 2),
        "evaluated": result.evaluated,
        "verified": sum(1 for e in result.entries if e.verdict.verified),
        "candidates_per_min": round(60.0 * result.evaluated / search_s, 2) if search_s else None,
        "evaluator_s_median": round(statistics.median(evaluator_s), 3),
        "overhead_ms_median": round(1000 * statistics.median(overheads), 1),
        "overhead_ms_all": [round(1000 * o, 1) for o in overheads],
        "verdicts": [[e.candidate.id, e.verdict.verified] for e in result.entries],
        "timed": executor.timing_available,
        "batches": timeline.batches,  # the first one includes the reference's eager and compile timing
    }
    close = getattr(executor, "close", None)
    if close is not None:
        close()
    for evaluator in getattr(executor, "evaluators", []):
        evaluator.close()
    release_gpu_memory()
    return row


def release_gpu_memory() -> None:
    """The local executor's evaluators live in this process: give their cached GPU memory back before the
    next executor runs, or its workers would find the GPU fuller than the first one did."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        log.info("GPU memory still reserved by this process: %.1f GB", torch.cuda.memory_reserved() / 1e9)


def versions() -> dict[str, str]:
    import torch
    import triton

    found = {"python": platform.python_version(), "torch": torch.__version__, "triton": triton.__version__}
    try:
        import ray

        found["ray"] = ray.__version__
    except ImportError:
        found["ray"] = "not installed"
    return found


def markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        f"{meta['date']}, {meta['operator']}, budget {meta['budget']}, {meta['islands']} islands, seed {meta['seed']}; "
        + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
        + f"; {meta['cpus']} CPU cores",
        "",
        "| executor | device | workers | start-up s | search s | evaluated | verified | candidates/min "
        "| evaluator s/candidate | overhead ms/candidate |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['executor']} | {r['device']} | {r['workers']} | {r['startup_s']:.1f} | {r['search_s']:.1f} | "
            f"{r['evaluated']} | {r['verified']} | {r['candidates_per_min']:.1f} | {r['evaluator_s_median']:.2f} | "
            f"{r['overhead_ms_median']:.0f} |"
        )
    lines.append("")
    for r in rows:
        shown = ", ".join(f"{b['size']} in {b['wall_s']:.0f} s (x{b['concurrency']})" for b in r.get("batches", []))
        lines.append(f"{r['executor']} batches (candidates in wall time, concurrency achieved): {shown}  ")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("operator")
    parser.add_argument("--budget", type=int, default=8)
    parser.add_argument("--islands", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None, help="CPU workers (both executors)")
    parser.add_argument(
        "--gpus", type=int, default=None, help="GPUs to use: local evaluators, Ray GPU actors (default: every one)"
    )
    parser.add_argument("--executors", default="local,ray")
    parser.add_argument("--ray-address", default=None)
    parser.add_argument("--repeats", type=int, default=3, help="single evaluations for the overhead")
    parser.add_argument("--out", type=Path, default=None, help="write the rows and the table as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if not os.environ.get("TRITON_INTERPRET"):
        import torch

        if not torch.cuda.is_available():
            os.environ["TRITON_INTERPRET"] = "1"
    rows = []
    for kind in args.executors.split(","):
        log.info("benchmarking the %s executor", kind)
        rows.append(bench_one(kind.strip(), args))
    meta = {
        "date": datetime.now(UTC).date().isoformat(),
        "operator": args.operator,
        "budget": args.budget,
        "islands": args.islands,
        "seed": args.seed,
        "cpus": os.cpu_count(),
        "versions": versions(),
    }
    table = markdown(rows, meta)
    agree, summary = compare(rows)
    table += "\n" + summary + "\n"
    print(table)
    if args.out:
        args.out.write_text(json.dumps({"meta": meta, "rows": rows, "table": table}, indent=1) + "\n")
    return 0 if agree else 1


def compare(rows: list[dict[str, Any]]) -> tuple[bool, str]:
    """Whether the executors agree, and a line saying how: the same verdict for every candidate they all
    evaluated, and (untimed searches only) the same candidates."""
    lists = [dict(map(tuple, r["verdicts"])) for r in rows]
    shared = set.intersection(*(set(v) for v in lists)) if lists else set()
    differing = sorted(c for c in shared if len({v[c] for v in lists}) > 1)
    same_lists = len({json.dumps(r["verdicts"]) for r in rows}) == 1
    timed = any(r.get("timed") for r in rows)
    line = f"candidates evaluated by every executor: {len(shared)}, with differing verdicts: {len(differing)}"
    if differing:
        line += " (" + ", ".join(differing) + ")"
    if same_lists:
        line += "; the same candidates in the same order"
    else:
        only = sorted(set().union(*(set(v) for v in lists)) - shared)
        line += f"; {len(only)} evaluated by only some executors"
        if timed:
            line += " (timed search: parents are chosen by measured speedups, which differ run to run)"
    return not differing and (same_lists or timed), line


if __name__ == "__main__":
    sys.exit(main())
