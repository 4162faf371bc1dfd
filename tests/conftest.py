"""Test set-up. Without CUDA, Triton runs under its interpreter: the variable must be set before any
kernel module is imported. An autouse fixture points every default path at a temporary directory and
removes tokens, so a forgotten injection fails loudly instead of touching the real home or a real API."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
CUDA = torch.cuda.is_available()
if not CUDA:
    os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, str(ROOT / "bot"))


# The longest single tests on the 2-core CI machine (measured 2026-12-06, 45-265 s each): they run first, so that
# under xdist no worker is left alone with one of them at the end of the run. Only the order changes; a name
# that no longer exists matches nothing.
SLOW_FIRST = (
    "tests/github_bot/test_resume.py::test_a_cancelled_push_run_loses_no_operator",
    "tests/github_bot/test_detect_action.py::test_a_push_of_a_helper_file_or_of_the_config_alone",
    "tests/github_bot/test_api_refusals.py::test_a_refused_pull_request_is_explained",
    "tests/github_bot/test_detect_action.py::test_aliased_modules_are_optimized",
    "tests/github_bot/test_action_yml_steps.py::test_the_three_jobs_through_action_yml",
    "tests/cheats/test_cheats.py::test_cheat_is_rejected[redteam10_hybrid_flop_swap]",
    "tests/experience/test_concurrency.py::test_eight_writers_at_once_lose_nothing",
    "tests/github_bot/test_publish_recheck.py::test_the_check_runs_without_the_token",
    "tests/cheats/test_cheats.py::test_cheat_is_rejected[redteam7_bn_eval_backward]",
    "tests/github_bot/test_publish_recheck.py::test_a_kernel_the_artifact_calls_verified_but_is_wrong",
)


def slow_rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(SLOW_FIRST) if nodeid.startswith(prefix)), len(SLOW_FIRST))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: slow_rank(item.nodeid))  # stable: every other test keeps its place
    if CUDA:
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("FOUNDRY_EXPERIENCE_DB", str(home / "unset-experience.duckdb"))
    for name in list(os.environ):
        if name in {"GITHUB_TOKEN", "OPENAI_API_KEY", "GH_TOKEN"} or name.endswith(("_TOKEN", "_KEY")):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    yield


@pytest.fixture
def repo_root() -> Path:
    return ROOT


@pytest.fixture
def git() -> str:
    exe = shutil.which("git")
    if exe is None:
        pytest.skip("git is not installed")
    return exe
