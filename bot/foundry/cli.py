"""The `foundry` command line: one sub-command per module in foundry.commands, each with
`add_parser(subparsers)` and `run(args) -> int`. One error funnel: FatalError → exit 2 with a clear
message; anything unexpected → exit 3 with the traceback in the log."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from foundry.core.errors import FatalError

COMMANDS = ("check", "optimize", "bench", "detect", "experience", "action")

log = logging.getLogger("foundry")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="foundry", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"foundry.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"foundry.commands.{name}":
                continue  # a command not built yet in this checkout
            raise
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        return int(args.handler(args))
    except FatalError as exc:
        print(f"foundry: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("foundry: interrupted", file=sys.stderr)
        return 130
    except Exception:
        log.exception("foundry: unexpected internal error (please report it with this log)")
        return 3
