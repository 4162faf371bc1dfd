"""`foundry --help` speaks to a user: one sentence of what it does and the commands; every option that takes
a value says its default, in every command and sub-command."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from foundry.cli import COMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from parsers(child)


def option_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The option's help line(s) exactly as --help prints them."""
    formatter = parser._get_formatter()
    formatter.add_argument(action)
    return " ".join(formatter.format_help().split())


def test_every_option_that_takes_a_value_shows_its_default() -> None:
    missing = []
    for parser in parsers(build_parser()):
        for action in parser._actions:
            if not action.option_strings or action.nargs == 0:  # positionals; flags (off unless given)
                continue
            text = option_help(parser, action)
            if "default" not in text:
                missing.append(f"{parser.prog} {'/'.join(action.option_strings)}: {text}")
    assert missing == []


def test_defaults_are_the_values_the_parser_uses() -> None:
    parser = build_parser()
    optimize = next(p for p in parsers(parser) if p.prog.endswith(" optimize"))
    budget = next(a for a in optimize._actions if "--budget" in a.option_strings)
    assert f"(default: {budget.default})" in option_help(optimize, budget)
    assert parser.parse_args(["optimize", "op.py"]).budget == budget.default


def test_top_level_help_is_one_user_sentence_and_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    description = text.split("\n\n")[1]
    assert description.startswith("Kernel Foundry ") and description.rstrip().endswith(".")
    assert description.count(". ") == 0, "one sentence"
    assert "foundry.commands" not in text and "sub-command per module" not in text
    listed = text.split("commands:")[1]
    for name in COMMANDS:
        assert f"    {name} " in listed


def test_the_installed_command_prints_defaults() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "foundry", "optimize", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT / "bot")},
    )
    assert done.returncode == 0, done.stderr
    flat = " ".join(done.stdout.split())
    assert "(default: 32)" in flat and "(default: template)" in flat and "(default: strict)" in flat
