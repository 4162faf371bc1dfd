"""GitHub's refusals as the bot meets them in publish: a clear message, and no half-made pull request."""

from __future__ import annotations

import pytest
from foundry.github.api import GitHubApiError
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


def test_github_answers_no_commits_between_as_it_does_and_the_bot_explains_it(bot) -> None:
    """The fake answers a pull request whose head adds no commit to its base as GitHub does (422 Validation
    Failed, the reason in errors[]), and the bot's message carries the reason and the hint."""
    sha = bot.dev.commit({OP: operator_source(2.0)}, "add scale")
    bot.dev.push()
    bot.dev.push("foundry/main/ops-scale")
    env = bot.env("push", bot.push_payload(ZERO, sha), sha)
    with pytest.raises(GitHubApiError) as refused:
        bot.api(env).create_pull(
            branch="foundry/main/ops-scale", base="main", title="t", body="b", marker="m", draft=False
        )
    assert "HTTP 422: Validation Failed: No commits between main and foundry/main/ops-scale" in str(refused.value)
    assert "adds nothing to its base" in str(refused.value) and bot.fake.pulls == {}


def test_a_kernel_the_base_has_already_opens_no_empty_pull_request_and_closes_the_stale_one(bot) -> None:
    bot.candidates[OP] = kernel_source(2.0)
    sha1 = bot.dev.commit({OP: operator_source(2.0)}, "add scale")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(ZERO, sha1), sha1)) == 0
    [pull] = bot.fake.open_pulls()
    branch = bot.branch_sha("foundry/main/ops-scale")

    # a maintainer commits the very kernel into main with a change of the operator (its docstring): the run that
    # follows finds the same kernel; a branch on top of main would add nothing
    changed = operator_source(2.0).replace('"""y = relu(x) * 2.0"""', '"""y = relu(x) * 2.0, in place"""')
    sha2 = bot.dev.commit({OP: changed, "ops/scale_foundry.py": kernel_source(2.0)}, "take the kernel")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(sha1, sha2), sha2)
    assert bot.run("run", env) == 0
    assert bot.optimized == [OP, OP], "the operator changed, so it was optimized again"
    assert bot.branch_sha("foundry/main/ops-scale") == branch, "no commit that changes nothing was pushed"
    assert bot.fake.open_pulls() == [] and bot.fake.pulls[pull["number"]]["state"] == "closed"
    [note] = [c for c in bot.fake.comments.values() if c["issue"] == pull["number"] and "very kernel" in c["body"]]
    assert "ops/scale_foundry.py" in note["body"] and "Closing" in note["body"]
    assert "is this very kernel already" in env.step_summary.read_text()

    sha3 = bot.dev.commit({OP: changed.replace("in place", "kept")}, "again")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(sha2, sha3), sha3)
    assert bot.run("run", env) == 0 and bot.fake.pulls.keys() == {pull["number"]}, "and no new, empty one"
