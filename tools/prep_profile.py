"""Where a candidate's preparation goes: cProfile of one CandidateEvaluator.prepare() for an operator, at its GPU
shapes on a GPU (or at them on the CPU with --full; the CPU shapes otherwise).

    python3 tools/prep_profile.py examples/training/gelu_bias.py [--full] [--top 40]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bot"))

import torch  # noqa: E402
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig  # noqa: E402
from foundry.spec.loader import load_operator  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("operator")
    parser.add_argument("--full", action="store_true", help="the GPU shapes on the CPU")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    evaluator = CandidateEvaluator(load_operator(args.operator), config=EvaluatorConfig(), device=device)
    evaluator.small = device == "cpu" and not args.full
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    prepared = evaluator.prepare()
    if device != "cpu":
        torch.cuda.synchronize()
    profile.disable()
    print(
        f"prepare: {time.perf_counter() - start:.1f} s on {device}, {len(prepared.refs)} trials, "
        f"{len(prepared.gradients or [])} gradient calls"
    )
    stats = pstats.Stats(profile)
    stats.sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(args.top // 2)


if __name__ == "__main__":
    main()
