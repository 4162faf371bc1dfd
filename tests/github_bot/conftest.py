from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(1, str(Path(__file__).parents[1] / "e2e"))  # harness: `foundry action` as GitHub runs it

from fake_github import TOKEN, FakeGitHub  # noqa: E402
from foundry.github.api import GitHubApi, RetryPolicy  # noqa: E402
from gitfixtures import make_remote  # noqa: E402


class RecordedSleep:
    """Waits are recorded and shortened: tests check the bot honours retry-after without sitting it out."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture
def remote(tmp_path: Path, git: str):
    return make_remote(tmp_path)


@pytest.fixture
def fake(remote) -> FakeGitHub:
    bare, _ = remote
    with FakeGitHub("acme/models", bare) as server:
        yield server


@pytest.fixture
def sleeps() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture
def api(fake: FakeGitHub, sleeps: RecordedSleep) -> GitHubApi:
    return GitHubApi(
        "acme/models",
        TOKEN,
        base_url=fake.api_url,
        timeout_s=10,  # a loaded 2-core machine answers a page of 30 pull requests late; timeout tests use 1 s
        retry=RetryPolicy(sleep=sleeps),
        throttle=False,
        bot_login="kernel-foundry[bot]",
    )


@pytest.fixture
def bot(tmp_path: Path, git: str):
    """The action end to end: real git remote and checkouts, the fake API through PyGithub."""
    from harness import Harness

    bare, dev = make_remote(tmp_path)
    with FakeGitHub("acme/models", bare) as server:
        yield Harness(tmp_path, server, bare, dev)
