"""`/foundry help`, `/foundry stop`, `/foundry retry` and the dry-run input, end to end (real git, the fake
API through PyGithub)."""

from __future__ import annotations

import json

import pytest
from gitfixtures import git
from harness import ZERO, kernel_source, operator_source

pytestmark = pytest.mark.e2e

OP = "ops/scale.py"


def with_operator(bot) -> str:
    bot.candidates[OP] = kernel_source(2.0)
    sha = bot.dev.commit({OP: operator_source(2.0)}, "add scale")
    bot.dev.push()
    return sha


def comment(bot, issue: int, body: str, login: str = "alice"):
    bot.fake.permissions.setdefault(login, "write")
    made = bot.fake.add_comment(issue, body, login)
    return bot.env("issue_comment", bot.comment_payload(issue, made), bot.branch_sha("main")), made


def bot_comments(bot, issue: int) -> list[str]:
    return [c["body"] for c in bot.fake.comments.values() if c["issue"] == issue and c["user"] == "kernel-foundry[bot]"]


def test_help_lists_every_command(bot) -> None:
    with_operator(bot)
    issue = bot.fake.open_issue()
    env, _ = comment(bot, issue, "/foundry help")
    assert bot.run("run", env) == 0
    [reply] = bot_comments(bot, issue)
    for word in ("/foundry optimize", "/foundry stop", "/foundry retry", "/foundry help"):
        assert word in reply
    assert bot.optimized == []


def test_stop_cancels_the_threads_run_and_says_so(bot) -> None:
    with_operator(bot)
    issue = bot.fake.open_issue()
    env, request = comment(bot, issue, f"/foundry optimize {OP}")
    assert bot.run("triage", env) == 0  # the run is on the GPU runner now
    bot.fake.runs[int(env.run_id)] = "in_progress"
    [status] = bot_comments(bot, issue)
    assert "is optimizing" in status and f"run id={env.run_id}" in status
    bot.fake.permissions["reader"] = "read"
    quiet, _ = comment(bot, issue, "/foundry stop", "reader")
    assert bot.run("run", quiet) == 0
    assert bot.fake.runs[int(env.run_id)] == "in_progress", "only people with write access stop a run"
    stop_env, stop = comment(bot, issue, "/foundry stop")
    assert bot.run("run", stop_env) == 0
    assert bot.fake.runs[int(env.run_id)] == "completed"
    bodies = bot_comments(bot, issue)
    assert "stopped by @alice" in bodies[0] and "is optimizing" not in bodies[0]
    assert f"stopped: workflow run {env.run_id} was cancelled" in bodies[-1]
    assert ("+1", stop["id"]) in [(r["content"], r["comment"]) for r in bot.fake.reactions]
    again, _ = comment(bot, issue, "/foundry stop")
    assert bot.run("run", again) == 0
    assert "nothing to stop" in bot_comments(bot, issue)[-1]
    assert bot.optimized == []


def test_the_example_workflow_lets_triage_cancel_and_skips_publish_after_a_stop() -> None:
    import yaml
    from test_action_workflows import ROOT

    jobs = yaml.safe_load((ROOT / ".github/workflows/foundry-example.yml").read_text())["jobs"]
    assert jobs["triage"]["permissions"]["actions"] == "write"
    assert "!cancelled()" in jobs["publish"]["if"] and "always()" not in jobs["publish"]["if"]


def test_retry_runs_the_threads_last_request_again(bot, tmp_path) -> None:
    with_operator(bot)
    issue = bot.fake.open_issue()
    env, _ = comment(bot, issue, "/foundry retry")
    assert bot.run("run", env) == 0
    assert "nothing to retry" in bot_comments(bot, issue)[-1] and bot.optimized == []
    env, _ = comment(bot, issue, f"/foundry optimize {OP} --budget 2")
    assert bot.run("run", env) == 0
    env, retry = comment(bot, issue, "/foundry retry")
    artifacts = tmp_path / "retry-artifacts"
    assert bot.run("run", env, artifacts) == 0
    assert bot.optimized == [OP, OP]
    assert [o["budget"] for o in json.loads((artifacts / "plan.json").read_text())["operators"]] == [2]
    assert any(f"status comment={retry['id']}" in b and "finished" in b for b in bot_comments(bot, issue))


def test_a_dry_run_writes_the_summary_and_nothing_else(bot) -> None:
    sha = with_operator(bot)
    env = bot.env("push", bot.push_payload(ZERO, sha), sha, extra={"FOUNDRY_DRY_RUN": "true"})
    assert bot.run("run", env) == 0
    assert bot.optimized == [OP] and bot.fake.pulls == {} and bot.fake.writes() == []
    assert bot.branch_sha("foundry/main/ops-scale") is None
    assert git(bot.bare, "for-each-ref", "refs/foundry") == "", "a dry run records nothing as finished"
    assert "dry run: would open a pull request from foundry/main/ops-scale" in env.step_summary.read_text()
