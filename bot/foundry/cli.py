"""The `foundry` command line: one sub-command per module in foundry.commands, each with
`add_parser(subparsers)` and `run(args) -> int`. One error funnel: FatalError → exit 2 with a clear
message; anything unexpected → exit 3 with the traceback in the log."""

from __future__ import annotations

import argparse
import importlib
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from foundry.core.errors import FatalError, Terminated

COMMANDS = ("check", "optimize", "bench", "detect", "experience", "action")
DESCRIPTION = (
    "Kernel Foundry turns PyTorch operators into faster Triton kernels, each verified against its operator "
    "before it is kept."
)
EPILOG = "Run `foundry COMMAND --help` for a command's options and their defaults."

log = logging.getLogger("foundry")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions keep their line breaks; an option's help ends with its default unless it already names
    one (options whose default is None say in words what happens without them; flags are off)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if not action.option_strings or "default" in text or action.nargs == 0:
            return text
        if action.default is None or action.default is argparse.SUPPRESS:
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


def use_formatter(parser: argparse.ArgumentParser) -> None:
    """The help formatter on a parser and every sub-command's parser below it."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                use_formatter(child)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="foundry", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    sub = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"foundry.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"foundry.commands.{name}":
                continue  # a command not built yet in this checkout
            raise
        module.add_parser(sub)
    use_formatter(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if argv is None:  # the real command line: a command may start itself again (optimize does, without secrets)
        args.argv = sys.argv[1:]
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    previous = on_sigterm(raise_terminated)
    try:
        return int(args.handler(args))
    except FatalError as exc:
        print(f"foundry: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Terminated:
        print("foundry: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("foundry: interrupted", file=sys.stderr)
        return 130
    except Exception:
        log.exception("foundry: unexpected internal error (please report it with this log)")
        return 3
    finally:
        if previous is not None:
            on_sigterm(previous)


def raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(f"signal {signum}")


def on_sigterm(handler: Any) -> Any:
    """Install a SIGTERM handler and return the previous one; None where none can be installed (Python
    takes signal handlers in the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.signal(signal.SIGTERM, handler)
    return signal.SIG_DFL if previous is None else previous
