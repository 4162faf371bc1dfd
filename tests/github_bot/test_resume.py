"""A push run compares with the last commit the bot finished (refs/foundry/done/<base>, set by publish),
so a push run that was cancelled or failed loses no operator; and only `/foundry` comments may join a
thread's concurrency group, so other comments never replace a queued request."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from gitfixtures import git
from harness import ZERO, kernel_source, operator_source

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def push_run(bot, before: str, after: str) -> int:
    return bot.run("run", bot.env("push", bot.push_payload(before, after), after))


def done(bot) -> str | None:
    """Where refs/foundry/done/main points in the remote."""
    return git(bot.bare, "for-each-ref", "--format=%(objectname)", "refs/foundry/done/main") or None


def test_a_cancelled_push_run_loses_no_operator(bot) -> None:
    # the three operators are one source at three paths: which files a run optimizes is what is judged here, and
    # the stand-in's `foundry check` of that source and kernel runs once (harness._VERDICTS)
    for name in "abc":
        bot.candidates[f"ops/{name}.py"] = kernel_source(2.0)
    sha1 = bot.dev.commit({"ops/a.py": operator_source(2.0)}, "a")
    bot.dev.push()
    assert push_run(bot, ZERO, sha1) == 0
    assert done(bot) == sha1, "publish records the commit it finished"
    sha2 = bot.dev.commit({"ops/b.py": operator_source(2.0)}, "b")
    bot.dev.push()  # its run is cancelled while queued (a newer push took the pending slot): never runs
    sha3 = bot.dev.commit({"ops/c.py": operator_source(2.0)}, "c")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(sha2, sha3), sha3)
    assert bot.run("run", env) == 0
    assert bot.optimized == ["ops/a.py", "ops/b.py", "ops/c.py"], "b is optimized by the next push's run"
    assert sorted(p["head"] for p in bot.fake.open_pulls()) == [f"foundry/main/ops-{n}" for n in "abc"]
    assert done(bot) == sha3


def test_a_failed_run_does_not_move_the_finished_commit(bot) -> None:
    bot.candidates["ops/a.py"] = kernel_source(2.0)
    sha1 = bot.dev.commit({"ops/a.py": operator_source(2.0)}, "a")
    bot.dev.push()
    assert push_run(bot, ZERO, sha1) == 0
    bot.candidates["ops/b.py"] = kernel_source(2.0)  # the pair the test above checked: its verdicts are reused
    sha2 = bot.dev.commit({"ops/b.py": operator_source(2.0)}, "b")
    bot.dev.push()
    bot.fake.inject("POST", r"/pulls$", status=502, times=6)  # GitHub is down: b's pull request fails
    assert push_run(bot, sha1, sha2) == 1
    assert done(bot) == sha1, "nothing finished: the finished commit stays"
    sha3 = bot.dev.commit({"README.md": "docs\n"}, "docs only")
    bot.dev.push()
    assert push_run(bot, sha2, sha3) == 0
    assert [p["head"] for p in bot.fake.open_pulls()] == ["foundry/main/ops-a", "foundry/main/ops-b"]
    assert done(bot) == sha3
    # a rerun of the older push never moves it back
    assert push_run(bot, sha1, sha2) == 0
    assert done(bot) == sha3


# the example workflow's concurrency group, evaluated as GitHub evaluates expressions -------------------------
def evaluate(expression: str, github: dict) -> object:
    """A GitHub Actions expression in Python: the same operators and short-circuit values."""

    def starts_with(text: object, prefix: object) -> bool:
        return str(text or "").lower().startswith(str(prefix).lower())  # case-insensitive, as GitHub's

    def fmt(template: str, *args: object) -> str:
        return re.sub(r"\{(\d+)\}", lambda m: str(args[int(m.group(1))]), template)

    def ns(value: object) -> object:
        return SimpleNamespace(**{k: ns(v) for k, v in value.items()}) if isinstance(value, dict) else value

    code = " ".join(expression.split()).replace("&&", " and ").replace("||", " or ").replace("null", "None")
    code = re.sub(r"!(?!=)", " not ", code)
    return eval(code, {"startsWith": starts_with, "format": fmt, "github": ns(github)})  # noqa: S307


def concurrency_group(event_name: str, body: str = "", issue: int = 7, run_id: int = 1) -> str:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "foundry-example.yml").read_text())
    group = workflow["concurrency"]["group"]
    context = {
        "event_name": event_name,
        "ref": "refs/heads/main",
        "run_id": run_id,
        "event": {"comment": {"body": body}, "issue": {"number": issue}} if body else {},
    }
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(evaluate(m.group(1), context)), group, flags=re.S)


def test_only_foundry_comments_join_a_threads_concurrency_group() -> None:
    request = concurrency_group("issue_comment", "/foundry optimize ops/a.py", run_id=1)
    assert request == concurrency_group("issue_comment", "/foundry optimize", run_id=2), "one run per thread"
    for chatter in ("thanks, looks good", "LGTM /foundry", ""):
        other = concurrency_group("issue_comment", chatter or "👍", run_id=3)
        assert other != request and other != concurrency_group("issue_comment", chatter or "👍", run_id=4)
    assert concurrency_group("issue_comment", "/foundry optimize", issue=8) != request
    stop = concurrency_group("issue_comment", "/foundry stop", run_id=5)
    assert stop != request, "a stop request never waits behind the run it stops"
    assert concurrency_group("push", run_id=1) == concurrency_group("workflow_dispatch", run_id=2)
