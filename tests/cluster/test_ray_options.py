"""Choosing the executor: flags, the environment the GitHub action passes on, and a clear error when
Ray is missing. None of these need Ray installed."""

from __future__ import annotations

import argparse
import ast
import socket
import sys
import time
from pathlib import Path

import pytest
from foundry.commands.optimize import SearchOptions, add_search_arguments, executor_choice
from foundry.core.errors import FatalError

PACKAGE = Path(__file__).resolve().parents[2] / "bot" / "foundry"


def parse(*argv: str) -> SearchOptions:
    parser = argparse.ArgumentParser()
    add_search_arguments(parser)
    return SearchOptions.from_args(parser.parse_args(list(argv)))


def test_local_is_the_default(monkeypatch):
    monkeypatch.delenv("FOUNDRY_EXECUTOR", raising=False)
    monkeypatch.delenv("FOUNDRY_RAY_ADDRESS", raising=False)
    options = parse()
    assert (options.executor, options.ray_address) == ("local", None)


def test_flags_choose_ray_and_its_address(monkeypatch):
    monkeypatch.delenv("FOUNDRY_RAY_ADDRESS", raising=False)
    assert parse("--executor", "ray").executor == "ray"
    options = parse("--executor", "ray", "--ray-address", "ray://head:10001")
    assert (options.executor, options.ray_address) == ("ray", "ray://head:10001")
    with pytest.raises(SystemExit):
        parse("--executor", "dask")


def test_an_address_from_the_environment_selects_ray_unless_a_flag_says_local(monkeypatch):
    monkeypatch.setenv("FOUNDRY_RAY_ADDRESS", "10.0.0.5:6379")
    assert executor_choice(None, None) == {"executor": "ray", "ray_address": "10.0.0.5:6379"}
    assert executor_choice("local", None)["executor"] == "local"
    assert executor_choice(None, "auto")["ray_address"] == "auto", "the flag wins over the environment"
    monkeypatch.setenv("FOUNDRY_RAY_ADDRESS", "")  # an unset secret arrives as an empty string
    assert executor_choice(None, None) == {"executor": "local", "ray_address": None}


def test_an_unknown_executor_from_the_environment_is_a_fatal_error(monkeypatch):
    monkeypatch.setenv("FOUNDRY_EXECUTOR", "spark")
    with pytest.raises(FatalError, match="--executor must be one of local, ray"):
        parse()


def test_bench_takes_the_same_executor_flags():
    from foundry.cli import build_parser

    args = build_parser().parse_args(["bench", "op.py", "--executor", "ray", "--ray-address", "auto"])
    assert (args.executor, args.ray_address) == ("ray", "auto")


def test_without_ray_the_executor_says_how_to_install_it(monkeypatch):
    from foundry.evolve.ray_executor import RayExecutor

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(FatalError, match=r"pip install 'kernel-foundry\[cluster\]'"):
        RayExecutor(lambda device: None)


def test_only_the_ray_executor_imports_ray_and_only_lazily():
    importers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            if any(n == "ray" or n.startswith("ray.") for n in names):
                importers.append(str(path.relative_to(PACKAGE)))
                assert node not in tree.body, f"{path.name} imports ray at module level"
    assert set(importers) == {"evolve/ray_executor.py"}


def test_an_unreachable_cluster_address_fails_fast():
    ray = pytest.importorskip("ray")
    from foundry.evolve.ray_executor import RayExecutor, RayTimeouts

    if ray.is_initialized():
        pytest.skip("Ray is already initialized in this process")
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(FatalError, match=rf"cannot reach the Ray cluster at ray://127.0.0.1:{port}: .*head node"):
        RayExecutor(lambda device: None, address=f"ray://127.0.0.1:{port}", timeouts=RayTimeouts(connect_s=5))
    assert time.monotonic() - started < 20
    assert not ray.is_initialized()
