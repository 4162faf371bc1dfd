"""`foundry action triage|optimize|publish|run [--artifacts DIR]` — inside GitHub Actions.

    triage    gate the event (permissions, command), 👀 and the status comment; list operators
    optimize  detect and optimize each operator into DIR (read-only: no writes to GitHub)
    publish   read DIR as data; one pull request per operator; status comment, 🚀/😕
    run       all three in one job

Reads GITHUB_* variables and the event payload; writes $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

STEPS = ("triage", "optimize", "publish", "run")


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "action",
        help="run a step of the GitHub Action",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("step", choices=STEPS)
    parser.add_argument(
        "--artifacts",
        default=os.environ.get("FOUNDRY_ARTIFACTS", "foundry-artifacts"),
        help="directory of the optimize job's results (default foundry-artifacts, or $FOUNDRY_ARTIFACTS)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from foundry import action

    env = action.ActionEnv.from_environ(os.environ)
    artifacts = Path(args.artifacts).resolve()  # relative to the working directory, as in a workflow step
    if args.step == "triage":
        return action.triage(env)
    if args.step == "optimize":
        return action.optimize(env, artifacts)
    if args.step == "publish":
        return action.publish(env, artifacts)
    return action.run_all(env, artifacts)
