from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "github_bot"))

from fake_github import FakeGitHub  # noqa: E402
from gitfixtures import make_remote  # noqa: E402
from harness import Harness  # noqa: E402


@pytest.fixture
def bot(tmp_path: Path, git: str):
    bare, dev = make_remote(tmp_path)
    with FakeGitHub("acme/models", bare) as fake:
        yield Harness(tmp_path, fake, bare, dev)
