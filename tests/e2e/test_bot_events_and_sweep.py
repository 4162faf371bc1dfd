"""Events shaped like GitHub's own payloads (fixtures in payloads/, written for these tests), the nightly
sweep (`on: schedule`), the three-job status comment, a conflicted pull request rebuilt on its moved base, and
a repository with more open pull requests than one page. Real git, the fake API through PyGithub."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fake_github import ISSUES_TOKEN
from foundry.github.events import EventError
from harness import ZERO, kernel_source, operator_source, read_outputs

pytestmark = pytest.mark.e2e

PAYLOADS = Path(__file__).with_name("payloads")
OP = "ops/scale.py"
OTHER = "ops/shift.py"
BRANCH = "foundry/main/ops-scale"


def payload(bot, name: str, **values: object) -> dict:
    """A fixture with its placeholders filled: numbers stay numbers, text is JSON-escaped."""
    text = (PAYLOADS / name).read_text()
    fills = {"API": bot.fake.api_url, "HTML": bot.fake.root, **{k.upper(): v for k, v in values.items()}}
    for key, value in fills.items():
        if isinstance(value, int):
            text = text.replace(f'"__{key}__"', str(value)).replace(f"__{key}__", str(value))
        else:
            text = text.replace(f"__{key}__", json.dumps(str(value))[1:-1])
    data = json.loads(text)
    left = [k for k in ("__BEFORE__", "__AFTER__", "__NUMBER__", "__LOGIN__", "__BODY__") if k in json.dumps(data)]
    assert not left, f"unfilled placeholders {left} in {name}"
    return data


def two_operators(bot) -> str:
    bot.candidates[OP] = kernel_source(2.0)
    bot.candidates[OTHER] = kernel_source(3.0)
    sha = bot.dev.commit({OP: operator_source(2.0), OTHER: operator_source(3.0)}, "two operators")
    bot.dev.push()
    return sha


def test_fixture_payloads_drive_the_triage(bot) -> None:
    sha = two_operators(bot)
    env = bot.env("push", payload(bot, "push.json", before=ZERO, after=sha), sha)
    assert bot.run("triage", env) == 0
    assert sorted(json.loads(read_outputs(env)["operators"])) == [OP, OTHER]

    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue("scale is slow")
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OTHER} --budget 2", "alice")
    data = payload(
        bot, "issue_comment.issue.json", number=issue, comment_id=comment["id"], login="alice", body=comment["body"]
    )
    env = bot.env("issue_comment", data, sha)
    assert bot.run("triage", env) == 0
    assert json.loads(read_outputs(env)["operators"]) == [OTHER]
    assert [r["content"] for r in bot.fake.reactions] == ["eyes"]

    # a pull request from a branch of the repository, commented on: the operators it changed
    feature = bot.dev.commit({OP: operator_source(5.0)}, "scale by five")
    bot.dev.push("faster-scale")
    number = bot.fake.open_pull("faster-scale", title="Faster scale")
    comment = bot.fake.add_comment(number, "/foundry optimize", "alice")
    data = payload(
        bot,
        "issue_comment.pull_request.json",
        number=number,
        comment_id=comment["id"],
        login="alice",
        body="/foundry optimize",
    )
    env = bot.env("issue_comment", data, sha)
    assert bot.run("triage", env) == 0
    outputs = read_outputs(env)
    assert json.loads(outputs["operators"]) == [OP] and outputs["head"] == feature

    # a comment by someone without write access: asked through the API, refused, nothing planned
    comment = bot.fake.add_comment(issue, "/foundry optimize ops/scale.py", "mallory")
    data = payload(
        bot, "issue_comment.issue.json", number=issue, comment_id=comment["id"], login="mallory", body=comment["body"]
    )
    env = bot.env("issue_comment", data, sha)
    assert bot.run("triage", env) == 0 and read_outputs(env)["run"] == "false"


def test_a_pull_request_event_is_refused_by_name(bot) -> None:
    """The example workflow has no pull_request trigger (fork code would reach the runner); a workflow that
    adds one gets an error that says which events the bot handles."""
    sha = two_operators(bot)
    env = bot.env("pull_request", payload(bot, "pull_request.opened.json", number=7, before=ZERO, after=sha), sha)
    with pytest.raises(EventError, match="it handles issue_comment, push, schedule, workflow_dispatch"):
        bot.run("triage", env)
    assert bot.fake.writes() == []


def _done(bot) -> str | None:
    proc = subprocess.run(
        ["git", "-C", str(bot.bare), "rev-parse", "--verify", "-q", "refs/foundry/done/main"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() or None


def test_the_nightly_sweep_plans_what_the_bot_has_not_finished(bot) -> None:
    sha1 = two_operators(bot)
    # no push run ever finished here: the first sweep plans every operator of the default branch
    env = bot.env("schedule", payload(bot, "schedule.json"), sha1)
    assert bot.run("triage", env) == 0
    assert sorted(json.loads(read_outputs(env)["operators"])) == [OP, OTHER]
    env = bot.env("schedule", payload(bot, "schedule.json"), sha1)
    assert bot.run("run", env) == 0
    assert len(bot.fake.open_pulls()) == 2 and _done(bot) == sha1

    # a change whose push run never came (dropped, or filtered out): the next sweep plans that operator only
    # OTHER becomes OP's source (a change all the same): the stand-in's check of that pair is reused (harness)
    bot.candidates[OTHER] = kernel_source(2.0)
    sha2 = bot.dev.commit({OTHER: operator_source(2.0), "README.md": "notes\n"}, "shift by two")
    bot.dev.push()
    env = bot.env("schedule", payload(bot, "schedule.json"), sha2)
    assert bot.run("triage", env) == 0
    assert json.loads(read_outputs(env)["operators"]) == [OTHER]

    # nothing new since the last finished commit: nothing planned, nothing written
    env = bot.env("schedule", payload(bot, "schedule.json"), sha2)
    assert bot.run("run", env) == 0 and _done(bot) == sha2
    writes = len(bot.fake.writes())
    env = bot.env("schedule", payload(bot, "schedule.json"), sha2)
    assert bot.run("triage", env) == 0
    assert read_outputs(env)["run"] == "false" and len(bot.fake.writes()) == writes


def test_the_three_job_status_comment_shows_each_stage(bot, tmp_path: Path) -> None:
    sha = two_operators(bot)
    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue()
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OP}", "alice")
    data = payload(
        bot, "issue_comment.issue.json", number=issue, comment_id=comment["id"], login="alice", body=comment["body"]
    )

    def status() -> str:
        mine = [bot.fake.comments[c] for c in bot.fake.issues[issue]["comments"]]
        found = [c["body"] for c in mine if f"kernel-foundry:status comment={comment['id']}" in c["body"]]
        assert len(found) == 1
        return found[0]

    assert bot.run("triage", bot.env("issue_comment", data, sha)) == 0
    body = status()
    assert "1. ✅ triage" in body and "2. ⏳ optimize on the GPU runner" in body and "3. ⏸️ publish" in body
    assert f"- ⏳ `{OP}`" in body and "kernel-foundry:run id=" in body
    artifacts = tmp_path / "artifacts"
    writes = len(bot.fake.writes())
    assert bot.run("optimize", bot.env("issue_comment", data, sha, token=ISSUES_TOKEN), artifacts) == 0
    gpu = bot.fake.writes()[writes:]
    assert all(c.method == "PATCH" and "/issues/comments/" in c.path for c in gpu), "it edits the comment only"
    assert "2. ⏳ optimize on the GPU runner (1 of 1 finished)" in status(), "the GPU job moved it"
    assert bot.run("publish", bot.env("issue_comment", data, sha), artifacts) == 0
    edits = [
        c.body["body"]
        for c in bot.fake.calls
        if c.method == "PATCH" and "/issues/comments/" in c.path and "kernel-foundry:status" in c.body.get("body", "")
    ]
    publishing = [e for e in edits if "3. ⏳ publish" in e]
    assert publishing, "publish shows its stage before it opens pull requests"
    assert "2. ✅ optimize on the GPU runner (1 of 1 finished)" in publishing[0] and f"- ✅ `{OP}`" in publishing[0]
    assert "🚀" in status() and "finished" in status()


def test_a_push_run_rebuilds_the_bots_conflicted_pull_request(bot) -> None:
    sha1 = two_operators(bot)
    assert bot.run("run", bot.env("push", bot.push_payload(ZERO, sha1), sha1)) == 0
    old = bot.branch_sha(BRANCH)
    pulls = {p["head"]: p["number"] for p in bot.fake.open_pulls()}
    # main gets a hand-made ops/scale_foundry.py and a change of the other operator in one push
    bot.candidates[OTHER] = kernel_source(2.0)  # OP's source, as in the sweep test: their checks are reused
    sha2 = bot.dev.commit({"ops/scale_foundry.py": "# by hand\n", OTHER: operator_source(2.0)}, "by hand")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(sha1, sha2), sha2)
    assert bot.run("run", env) == 0
    new = bot.branch_sha(BRANCH)
    assert new != old and bot.branch_file(BRANCH, "ops/scale_foundry.py") == kernel_source(2.0)
    parent = subprocess.run(
        ["git", "-C", str(bot.bare), "rev-parse", f"{new}^1"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert parent == sha2
    summary = env.step_summary.read_text()
    assert f"pull request #{pulls[BRANCH]} rebuilt" in summary and "conflicted with main" in summary
    assert bot.fake.pulls[pulls[BRANCH]]["state"] == "open"


def test_the_bots_pull_request_past_the_first_page_is_updated(bot) -> None:
    bot.candidates[OP] = kernel_source(2.0)
    sha1 = bot.dev.commit({OP: operator_source(2.0)}, "add scale")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(ZERO, sha1), sha1)) == 0
    (mine,) = bot.fake.open_pulls()
    for i in range(35):
        bot.fake.open_pull(f"feature-{i}", title=f"feature {i}")
    bot.fake.filters_heads = False
    bot.candidates[OP] = kernel_source(3.0)
    sha2 = bot.dev.commit({OP: operator_source(3.0)}, "scale by three")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(sha1, sha2), sha2)
    assert bot.run("run", env) == 0
    assert read_outputs(env)["pr-number"] == str(mine["number"])
    assert len(bot.fake.pulls) == 36 and bot.branch_file(BRANCH, "ops/scale_foundry.py") == kernel_source(3.0)
