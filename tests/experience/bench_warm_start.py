"""Benchmark of issue 4: the same operator searched twice with the same budget, first against an empty
experience library (cold), then against the library the first run filled (warm).

    PYTHONPATH=bot python tests/experience/bench_warm_start.py examples/ops/softmax.py \
        [--budget 16] [--islands 4] [--out DIR]

Reports, for both runs: evaluations and seconds to the first verified candidate, the best speedup over
eager, and the evaluations the run needed to reach the cold run's best speedup (within the timing
noise, TOLERANCE). The issue's target: the warm run gets there in at most half the evaluations.
Writes DIR/warm_start.json; both runs' outputs (report.json, history.jsonl) stay under DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TOLERANCE = 0.97  # a speedup within 3 % of the cold best counts as reaching it (median timing noise)


def search(operator: str, out: Path, db: Path, budget: int, islands: int, time_limit: float | None) -> dict:
    env = {**os.environ, "FOUNDRY_EXPERIENCE_DB": str(db)}
    argv = [sys.executable, "-m", "foundry", "optimize", operator, "--budget", str(budget),
            "--islands", str(islands), "--out", str(out), "--json"]  # fmt: skip
    if time_limit:
        argv += ["--time-limit", str(time_limit)]
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with (out / "stderr.log").open("w") as log:  # streamed: a run killed by a time limit keeps its log
        proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    wall = time.monotonic() - started
    if proc.returncode not in (0, 1):
        tail = (out / "stderr.log").read_text()[-3000:]
        raise SystemExit(f"optimize failed ({proc.returncode}):\n{tail}")
    report = json.loads(proc.stdout)
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines() if line.strip()]
    return {"report": report, "history": history, "wall_s": wall}


def speedup(entry: dict) -> float | None:
    verdict = entry["verdict"]
    timing = verdict.get("timing") or {}
    if not verdict["verified"] or not timing.get("measured"):
        return None
    if timing.get("candidate_ms") and timing.get("eager_ms"):
        return timing["eager_ms"] / timing["candidate_ms"]
    return None


def summarize(run: dict, target: float | None) -> dict:
    history = sorted(run["history"], key=lambda e: e["order"])
    first_verified = next((i + 1 for i, e in enumerate(history) if e["verdict"]["verified"]), None)
    seconds = sum(e["verdict"].get("wall_s", 0.0) for e in history[:first_verified]) if first_verified else None
    speeds = [speedup(e) for e in history]
    best = max((s for s in speeds if s is not None), default=None)
    to_target = None
    if target is not None:
        to_target = next((i + 1 for i, s in enumerate(speeds) if s is not None and s >= TOLERANCE * target), None)
    report = run["report"]
    return {
        "evaluated": len(history),
        "evaluations_to_first_verified": first_verified,
        "evaluation_seconds_to_first_verified": round(seconds, 2) if seconds is not None else None,
        "best_speedup_in_search": round(best, 3) if best else None,
        "reverified_speedup": _reverified(report) if report.get("best_verdict") else None,
        f"evaluations_to_{TOLERANCE:.2f}x_cold_best": to_target,
        "from_library": sum(1 for e in history if e.get("origin") == "library"),
        "experience": report.get("experience"),
        "wall_s": round(run["wall_s"], 1),
    }


def _reverified(report: dict) -> float | None:
    timing = report["best_verdict"].get("timing") or {}
    if timing.get("measured") and timing.get("candidate_ms") and timing.get("eager_ms"):
        return round(timing["eager_ms"] / timing["candidate_ms"], 3)
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("operator")
    parser.add_argument("--budget", type=int, default=16)
    parser.add_argument("--islands", type=int, default=4)
    parser.add_argument("--time-limit", type=float, default=None, help="seconds per search")
    parser.add_argument("--out", type=Path, default=Path("foundry-out/warm-start"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    db = args.out / "experience.duckdb"
    db.unlink(missing_ok=True)
    result_file = args.out / "warm_start.json"
    print(f"cold search of {args.operator} (budget {args.budget}) ...", flush=True)
    cold = search(args.operator, args.out / "cold", db, args.budget, args.islands, args.time_limit)
    cold_summary = summarize(cold, None)
    target = cold_summary["best_speedup_in_search"]
    cold_summary = summarize(cold, target)
    result = {"operator": args.operator, "budget": args.budget, "islands": args.islands,
              "cold_best_speedup": target, "cold": cold_summary, "warm": None}  # fmt: skip
    # Written now as well: a warm run cut off by a time limit leaves the cold numbers behind.
    result_file.write_text(json.dumps(result, indent=2))
    print(f"cold: {json.dumps(cold_summary)}", flush=True)
    print("warm search ...", flush=True)
    warm = search(args.operator, args.out / "warm", db, args.budget, args.islands, args.time_limit)
    warm_summary = summarize(warm, target)
    result["warm"] = warm_summary
    key = f"evaluations_to_{TOLERANCE:.2f}x_cold_best"
    if target and cold_summary[key] and warm_summary[key]:
        result["warm_over_cold_evaluations"] = round(warm_summary[key] / cold_summary[key], 3)
    result_file.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
