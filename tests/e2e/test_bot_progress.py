"""The status comment moves while the operators are optimized, in the three-job form (the GPU job edits it
with a token that may edit comments and nothing else) and in the one-job form: before each operator, as
its search goes (the generation, read from the optimizer's log as numbers only), and when it is done.
Real git, the fake API through PyGithub, tokens with the permissions of the example workflow's jobs."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from fake_github import ISSUES_TOKEN, READ_TOKEN
from harness import kernel_source, operator_source

pytestmark = pytest.mark.e2e

OP = "ops/scale.py"
OTHER = "ops/shift.py"
FAST = {"FOUNDRY_PROGRESS_INTERVAL": "0.05"}


def pull_request_with_two_operators(bot) -> tuple[int, dict]:
    """A feature pull request that adds two operators, and a maintainer's `/foundry optimize` on it."""
    bot.dev.commit({"README.md": "models\n"}, "start")
    main = bot.dev.push()
    bot.candidates[OP] = kernel_source(2.0)
    bot.candidates[OTHER] = kernel_source(3.0)
    bot.dev.commit({OP: operator_source(2.0), OTHER: operator_source(3.0)}, "two operators")
    bot.dev.push("feature")
    number = bot.fake.open_pull("feature", "main")
    bot.fake.permissions["alice"] = "write"
    comment = bot.fake.add_comment(number, "/foundry optimize", "alice")
    return number, {"comment": comment, "main": main}


def status_edits(bot, comment_id: int, since: int = 0) -> list[str]:
    marker = f"kernel-foundry:status comment={comment_id}"
    return [
        c.body["body"]
        for c in bot.fake.calls[since:]
        if c.method in ("PATCH", "POST") and c.status in (200, 201)
        if isinstance(c.body, dict) and marker in str(c.body.get("body", ""))
    ]


def logging_optimizer(bot, lines: list[str], comment_id: int):
    """The stand-in optimizer, writing the optimizer's progress lines to its log first; after each it waits
    until the status comment shows it (so the test does not depend on how fast the machine is)."""

    def optimizer(env, op, out_dir: Path) -> int:
        out_dir.mkdir(parents=True, exist_ok=True)
        with (out_dir / "optimize.log").open("a") as log:
            for line in lines:
                log.write(line + "\n")
                log.flush()
                found = re.search(r"progress: generation (\d+): (\d+)/(\d+)", line)
                if found is None:
                    continue
                shown = f"`{op.ref}` — generation {found[1]}, {found[2]} of {found[3]}"
                deadline = time.monotonic() + 30
                while not any(shown in e for e in status_edits(bot, comment_id)):
                    assert time.monotonic() < deadline, f"the status comment never showed {shown}"
                    time.sleep(0.05)
        return bot.check_optimizer(env, op, out_dir)

    return optimizer


LOG = [
    "INFO foundry.commands.optimize: optimizing",
    "INFO foundry.evolve.progress: generation 1: 3/8 candidates evaluated, 2 s",
    "@everyone <img src=x> generation 9: 1/1 candidates evaluated [click](https://evil.example)",
    "INFO foundry.evolve.progress: generation 2: 6/8 candidates evaluated, 4 s",
]


def test_the_gpu_job_moves_the_status_comment_with_a_token_that_edits_comments_only(bot, tmp_path: Path) -> None:
    number, made = pull_request_with_two_operators(bot)
    comment = made["comment"]
    payload = bot.comment_payload(number, comment, pull=True)
    assert bot.run("triage", bot.env("issue_comment", payload, made["main"])) == 0
    optimizer = logging_optimizer(bot, LOG, comment["id"])
    calls = len(bot.fake.calls)
    env = bot.env("issue_comment", payload, made["main"], token=ISSUES_TOKEN, extra=FAST)
    artifacts = env.workspace.parent / "artifacts"
    assert bot.run("optimize", env, artifacts, optimizer=optimizer) == 0

    writes = [c for c in bot.fake.calls[calls:] if c.method != "GET"]
    assert writes and all(c.method == "PATCH" and "/issues/comments/" in c.path for c in writes), (
        "the GPU job edits the status comment and writes nothing else"
    )
    edits = status_edits(bot, comment["id"], calls)
    first, last = edits[0], edits[-1]
    assert f"- ⏳ `{OP}` — starting" in first and f"- ⏸️ `{OTHER}`" in first
    assert any(f"- ⏳ `{OP}` — generation 1, 3 of 8 candidates evaluated" in e for e in edits)
    assert any(f"- ✅ `{OP}`" in e and f"- ⏳ `{OTHER}` — generation 2, 6 of 8" in e for e in edits)
    assert "2. ⏳ optimize on the GPU runner (2 of 2 finished)" in last
    assert f"- ✅ `{OP}`" in last and f"- ✅ `{OTHER}`" in last
    assert all(f"run id={env.run_id}" in e and "is optimizing" in e for e in edits), "/foundry stop still finds it"
    assert not any("everyone" in e or "evil" in e or "generation 9" in e for e in edits), "the log is data"

    assert bot.run("publish", bot.env("issue_comment", payload, made["main"]), artifacts) == 0
    [status] = [c["body"] for c in bot.fake.comments.values() if f"status comment={comment['id']}" in c["body"]]
    assert "🚀" in status and "finished" in status


def test_a_read_only_gpu_job_optimizes_all_the_same_and_leaves_the_comment_to_publish(bot, tmp_path: Path) -> None:
    number, made = pull_request_with_two_operators(bot)
    comment = made["comment"]
    payload = bot.comment_payload(number, comment, pull=True)
    assert bot.run("triage", bot.env("issue_comment", payload, made["main"])) == 0
    before = [c["body"] for c in bot.fake.comments.values() if f"status comment={comment['id']}" in c["body"]]
    calls = len(bot.fake.calls)
    env = bot.env("issue_comment", payload, made["main"], token=READ_TOKEN, extra=FAST)
    assert bot.run("optimize", env, tmp_path / "artifacts") == 0
    assert sorted(bot.optimized) == [OP, OTHER]
    refused = [c for c in bot.fake.calls[calls:] if c.method != "GET"]
    assert [c.status for c in refused] == [403], "one refused edit, then no more tries"
    after = [c["body"] for c in bot.fake.comments.values() if f"status comment={comment['id']}" in c["body"]]
    assert after == before


def test_a_stopped_run_keeps_its_stopped_comment(bot, tmp_path: Path) -> None:
    number, made = pull_request_with_two_operators(bot)
    comment = made["comment"]
    payload = bot.comment_payload(number, comment, pull=True)
    triage = bot.env("issue_comment", payload, made["main"])
    assert bot.run("triage", triage) == 0
    bot.fake.runs[int(triage.run_id)] = "in_progress"
    stop = bot.fake.add_comment(number, "/foundry stop", "alice")
    assert bot.run("run", bot.env("issue_comment", bot.comment_payload(number, stop, pull=True), made["main"])) == 0
    [stopped] = [c["body"] for c in bot.fake.comments.values() if f"status comment={comment['id']}" in c["body"]]
    assert "stopped by @alice" in stopped
    # the GPU job, not yet reached by the cancellation, finishes its operator
    env = bot.env("issue_comment", payload, made["main"], token=ISSUES_TOKEN, extra=FAST)
    assert bot.run("optimize", env, tmp_path / "artifacts") == 0
    [still] = [c["body"] for c in bot.fake.comments.values() if f"status comment={comment['id']}" in c["body"]]
    assert still == stopped


def test_the_one_job_form_shows_the_generation_too(bot) -> None:
    number, made = pull_request_with_two_operators(bot)
    comment = made["comment"]
    payload = bot.comment_payload(number, comment, pull=True)
    env = bot.env("issue_comment", payload, made["main"], extra=FAST)
    optimizer = logging_optimizer(bot, LOG, comment["id"])
    assert bot.run("run", env, optimizer=optimizer) == 0
    edits = status_edits(bot, comment["id"])
    assert any(f"- ✅ `{OP}`" in e and f"- ⏳ `{OTHER}` — generation 2, 6 of 8" in e for e in edits)
    assert "1. ✅ triage" not in "".join(e for e in edits if "generation" in e), "the one-job body has no stages"
    assert not any("everyone" in e or "evil" in e for e in edits)
    assert "🚀" in edits[-1]
