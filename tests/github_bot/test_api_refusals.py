"""GitHub's refusals as the bot meets them in publish: a clear message, and no half-made pull request."""

from __future__ import annotations

import pytest
from harness import ZERO, kernel_source, operator_source

pytestmark = pytest.mark.e2e

OP = "ops/scale.py"


@pytest.mark.parametrize(
    ("status", "message", "hint"),
    [
        (403, "Resource not accessible by integration", "pull-requests: write"),
        (403, "GitHub Actions is not permitted to create or approve pull requests.", "Allow GitHub Actions"),
        (422, "No commits between main and foundry/main/ops-scale", "adds nothing to its base"),
    ],
)
def test_a_refused_pull_request_is_explained_and_leaves_nothing_behind(bot, status, message, hint) -> None:
    bot.candidates[OP] = kernel_source(2.0)
    sha = bot.dev.commit({OP: operator_source(2.0)}, "add scale")
    bot.dev.push()
    bot.fake.inject("POST", r"/pulls$", status=status, message=message)
    env = bot.env("push", bot.push_payload(ZERO, sha), sha)
    assert bot.run("run", env) == 1
    assert bot.fake.pulls == {} and bot.branch_sha("foundry/main/ops-scale") is None, "the branch is deleted again"
    summary = env.step_summary.read_text()
    assert message.split(" main")[0] in summary and hint in summary and "deleted again" in summary
    bot.fake.faults.clear()  # nothing lost: the next run proposes it
    env = bot.env("push", bot.push_payload(ZERO, sha), sha)
    assert bot.run("run", env) == 0 and len(bot.fake.open_pulls()) == 1
