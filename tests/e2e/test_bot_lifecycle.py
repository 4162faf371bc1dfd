"""The pull request lifecycle end to end (real git, the fake GitHub through PyGithub): which branch
a run writes, whose commits it may replace, when a closed pull request stays closed, which commit
later jobs use, and what triage answers at the edges."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from foundry import action
from foundry.core.records import RunReport, Timing
from harness import ZERO, kernel_source, operator_source, read_outputs

pytestmark = pytest.mark.e2e

OP = "ops/scale.py"
MAIN_BRANCH = "foundry/main/ops-scale"
KERNEL = "ops/scale_foundry.py"


def first_push(bot) -> str:
    bot.candidates[OP] = kernel_source(2.0)
    sha = bot.dev.commit({OP: operator_source(2.0), "README.md": "models\n"}, "add scale")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(ZERO, sha), sha)) == 0
    return sha


def feature_pull(bot, files: dict[str, str]) -> tuple[int, str]:
    """A maintainer's pull request from branch `feature` into main."""
    bot.dev.commit(files, "feature work")
    head = bot.dev.push("feature")
    return bot.fake.open_pull("feature", "main"), head


def comment_run(bot, number: int, body: str = "/foundry optimize") -> tuple[int, object]:
    """`/foundry optimize` by a collaborator on pull request #number, in one job."""
    bot.fake.permissions.setdefault("alice", "write")
    comment = bot.fake.add_comment(number, body, "alice")
    env = bot.env("issue_comment", bot.comment_payload(number, comment, pull=True), bot.branch_sha("main"))
    return bot.run("run", env), env


# 1. one branch per operator and base ---------------------------------------------------------------
def test_a_comment_on_a_feature_pull_request_never_touches_the_pull_request_into_main(bot) -> None:
    first_push(bot)
    main_pull = bot.fake.open_pulls()[0]
    main_tip = bot.branch_sha(MAIN_BRANCH)
    bot.candidates[OP] = kernel_source(3.0)
    number, feature_head = feature_pull(bot, {OP: operator_source(3.0)})
    code, _ = comment_run(bot, number)
    assert code == 0
    assert bot.branch_sha(MAIN_BRANCH) == main_tip, "the branch proposed into main was not rebuilt"
    assert bot.branch_file(MAIN_BRANCH, KERNEL) == kernel_source(2.0)
    assert bot.fake.pulls[main_pull["number"]]["base"] == "main"
    made = [p for p in bot.fake.open_pulls() if p["number"] not in (main_pull["number"], number)]
    assert [(p["head"], p["base"]) for p in made] == [("foundry/feature/ops-scale", "feature")]
    assert bot.branch_file("foundry/feature/ops-scale", KERNEL) == kernel_source(3.0)
    assert bot.branch_sha("foundry/feature/ops-scale^") == feature_head, "built on the pull request's head"
    assert bot.branch_sha("feature") == feature_head


# 2. never force-push over someone else's commits -------------------------------------------------
def test_a_maintainers_commit_on_the_bots_branch_is_never_overwritten(bot) -> None:
    sha1 = first_push(bot)
    pull = dict(bot.fake.open_pulls()[0])
    number = pull["number"]
    git_dev = ["git", "-C", str(bot.dev.path)]  # the maintainer fixes the kernel on the bot's branch
    subprocess.run([*git_dev, "fetch", "-q", "origin", MAIN_BRANCH], check=True)
    subprocess.run([*git_dev, "checkout", "-q", "FETCH_HEAD"], check=True)
    fix = bot.dev.commit({KERNEL: kernel_source(2.0) + "# tuned by hand\n"}, "hand fix")
    bot.dev.push(MAIN_BRANCH)
    subprocess.run([*git_dev, "checkout", "-q", "main"], check=True)

    bot.candidates[OP] = kernel_source(3.0)
    sha2 = bot.dev.commit({OP: operator_source(3.0)}, "scale by 3")
    bot.dev.push()
    env = bot.env("push", bot.push_payload(sha1, sha2), sha2)
    assert bot.run("run", env) == 0
    assert bot.optimized == [OP, OP]
    assert bot.branch_sha(MAIN_BRANCH) == fix, "the maintainer's commit is still the branch's tip"
    assert bot.branch_file(MAIN_BRANCH, KERNEL) == kernel_source(2.0) + "# tuned by hand\n"
    notes = [c["body"] for c in bot.fake.comments.values() if c["issue"] == number]
    assert len(notes) == 1 and "not made by the bot" in notes[0] and fix[:7] in notes[0]
    summary = env.step_summary.read_text()
    assert "not updated" in summary and "did not make" in summary and "updated," not in summary
    assert (bot.fake.pulls[number]["title"], bot.fake.pulls[number]["body"]) == (pull["title"], pull["body"])
    assert read_outputs(env)["pr-number"] == ""


# 3. a closed pull request stays closed until the operator changes; a rename closes the old one -------
def test_a_closed_pull_request_stays_closed_until_the_operator_changes(bot) -> None:
    sha1 = first_push(bot)
    closed = bot.fake.open_pulls()[0]["number"]
    bot.fake.pulls[closed]["state"] = "closed"  # a maintainer does not want it
    env = bot.env("push", bot.push_payload(ZERO, sha1), sha1)  # the same push, run again
    assert bot.run("run", env) == 0
    assert bot.fake.open_pulls() == [] and len(bot.fake.pulls) == 1
    assert f"pull request \\#{closed} for this version of the operator was closed" in env.step_summary.read_text()
    # a comment change is not an operator change: still closed
    bot.dev.commit({OP: operator_source(2.0) + "# a comment\n"}, "comment")
    sha2 = bot.dev.push()
    assert bot.run("run", bot.env("workflow_dispatch", dispatch(bot, OP), sha2)) == 0
    assert bot.fake.open_pulls() == []
    # the operator changes: a new pull request
    bot.candidates[OP] = kernel_source(3.0)
    sha3 = bot.dev.commit({OP: operator_source(3.0)}, "scale by 3")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(sha2, sha3), sha3)) == 0
    [reopened] = bot.fake.open_pulls()
    assert reopened["number"] != closed and bot.branch_file(MAIN_BRANCH, KERNEL) == kernel_source(3.0)
    assert "source=" in reopened["body"].splitlines()[0]


def test_renaming_an_operator_closes_its_old_pull_request(bot) -> None:
    sha1 = first_push(bot)
    old = bot.fake.open_pulls()[0]["number"]
    sha2 = bot.dev.commit({OP: None, "ops/scaling.py": operator_source(2.0)}, "rename")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(sha1, sha2), sha2)) == 0
    assert bot.fake.pulls[old]["state"] == "closed"
    [note] = [c["body"] for c in bot.fake.comments.values() if c["issue"] == old]
    assert "was renamed to `ops/scaling.py`" in note and "/foundry optimize ops/scaling.py" in note


def dispatch(bot, operator: str) -> dict:
    return {
        "ref": "refs/heads/main",
        "inputs": {"operator": operator},
        "repository": bot.repository(),
        "sender": {"login": "dev"},
    }


# 4. time of check = time of use ------------------------------------------------------------------------
def three_jobs(bot, number: int, tmp_path, *, between=None) -> tuple[int, int, object, str]:
    """triage, then (after `between`) optimize and publish as the example workflow runs them: both check
    out triage's `head` output and get it as FOUNDRY_HEAD; GITHUB_SHA is main's tip throughout."""
    bot.fake.permissions.setdefault("alice", "write")
    comment = bot.fake.add_comment(number, "/foundry optimize", "alice")
    payload = bot.comment_payload(number, comment, pull=True)
    main_sha = bot.branch_sha("main")
    triage = bot.env("issue_comment", payload, main_sha)
    assert bot.run("triage", triage) == 0
    approved = read_outputs(triage)["head"]
    if between is not None:
        between()
    artifacts = tmp_path / f"artifacts-{comment['id']}"
    jobs = {"ref": approved, "extra": {"FOUNDRY_HEAD": approved}}
    try:
        optimized = bot.run("optimize", bot.env("issue_comment", payload, main_sha, **jobs), artifacts)
    except Exception as exc:  # the optimize job fails (the CLI's error funnel turns it into exit 2)
        optimized = str(exc)
    publish_env = bot.env("issue_comment", payload, main_sha, **jobs)
    return optimized, bot.run("publish", publish_env, artifacts), publish_env, approved


def test_optimize_and_publish_use_the_commit_triage_approved(bot, tmp_path) -> None:
    first_push(bot)
    bot.candidates[OP] = kernel_source(3.0)
    number, approved_head = feature_pull(bot, {OP: operator_source(3.0)})

    def push_after_triage() -> None:  # a commit lands on the pull request while the GPU job queues
        bot.dev.commit({OP: operator_source(4.0)}, "unreviewed change")
        bot.dev.push("feature")

    optimized, published, env, approved = three_jobs(bot, number, tmp_path, between=push_after_triage)
    assert approved == approved_head and (optimized, published) == (0, 0)
    made = bot.fake.open_pulls()[-1]
    assert (made["head"], made["base"]) == ("foundry/feature/ops-scale", "feature")
    assert bot.branch_sha("foundry/feature/ops-scale^") == approved_head
    assert bot.branch_file("foundry/feature/ops-scale", OP) == operator_source(3.0)


def test_a_pull_request_rewritten_after_triage_stops_the_run(bot, tmp_path) -> None:
    first_push(bot)
    bot.candidates[OP] = kernel_source(3.0)
    number, approved_head = feature_pull(bot, {OP: operator_source(3.0)})

    def rewrite() -> None:  # force-pushed: the approved commit is no longer part of the pull request
        subprocess.run(["git", "-C", str(bot.dev.path), "reset", "-q", "--hard", "HEAD^"], check=True)
        bot.dev.commit({OP: operator_source(3.0), "ops/evil.py": "import os\n"}, "rewritten")
        bot.dev.push("feature", force=True)

    optimized, published, env, _ = three_jobs(bot, number, tmp_path, between=rewrite)
    assert "no longer contains it" in str(optimized) and published == 1
    assert bot.optimized == [OP], "only the first push was optimized"
    assert [p["head"] for p in bot.fake.open_pulls() if p["head"].startswith("foundry/")] == [MAIN_BRANCH]
    status = next(c["body"] for c in bot.fake.comments.values() if "kernel-foundry:status" in c["body"])
    assert "no longer contains it" in status and approved_head[:12] in status
    assert bot.fake.reactions[-1]["content"] == "confused"


# 5. triage edges ----------------------------------------------------------------------------------------
def test_the_status_comment_is_only_ever_the_bots_own(bot) -> None:
    sha = first_push(bot)
    bot.fake.permissions.update({"alice": "write", "mallory": "read"})
    issue = bot.fake.open_issue()
    request = bot.fake.add_comment(issue, f"/foundry optimize {OP}", "alice")
    bait = f"<!-- kernel-foundry:status comment={request['id']} -->\nmy own words"
    planted = bot.fake.add_comment(issue, bait, "mallory")
    assert bot.run("run", bot.env("issue_comment", bot.comment_payload(issue, request), sha)) == 0
    assert bot.fake.comments[planted["id"]]["body"] == bait, "another user's comment is never edited"
    own = [c for c in bot.fake.comments.values() if c["user"] == "kernel-foundry[bot]"]
    assert len(own) == 1 and "finished" in own[0]["body"]


def test_a_malformed_command_from_someone_without_write_access_gets_no_reply(bot) -> None:
    sha = first_push(bot)
    bot.fake.permissions.update({"reader": "read", "alice": "write"})
    issue = bot.fake.open_issue()
    for login in ("reader", "alice"):
        comment = bot.fake.add_comment(issue, "/foundry optimise everything", login)
        assert bot.run("run", bot.env("issue_comment", bot.comment_payload(issue, comment), sha)) == 0
    replies = [c["body"] for c in bot.fake.comments.values() if c["user"] == "kernel-foundry[bot]"]
    assert len(replies) == 1 and replies[0].startswith("<!--") and "@alice unknown command" in replies[0]
    assert bot.optimized == [OP] and bot.fake.reactions == []


@pytest.mark.parametrize("pull", [False, True])
def test_closed_issues_and_pull_requests_are_not_served(bot, pull: bool) -> None:
    sha = first_push(bot)
    bot.fake.permissions["alice"] = "admin"
    if pull:
        number, _ = feature_pull(bot, {"ops/other.py": operator_source(5.0)})
        bot.fake.pulls[number]["state"] = "closed"
    else:
        number = bot.fake.open_issue()
    comment = bot.fake.add_comment(number, f"/foundry optimize {OP}", "alice")
    payload = bot.comment_payload(number, comment, pull=pull)
    payload["issue"]["state"] = "closed"
    writes = len(bot.fake.writes())
    env = bot.env("issue_comment", payload, sha)
    assert bot.run("run", env) == 0
    assert len(bot.fake.writes()) == writes and bot.optimized == [OP]
    assert "is closed" in env.step_summary.read_text()


def test_an_invalid_config_on_a_comment_run_is_answered(bot) -> None:
    first_push(bot)
    sha = bot.dev.commit({".github/foundry.yml": "max_budget: lots\n"}, "config")
    bot.dev.push()
    bot.fake.permissions.update({"alice": "write", "reader": "read"})
    issue = bot.fake.open_issue()
    quiet = bot.fake.add_comment(issue, f"/foundry optimize {OP}", "reader")
    assert bot.run("run", bot.env("issue_comment", bot.comment_payload(issue, quiet), sha)) == 0
    assert not any("foundry.yml" in c["body"] for c in bot.fake.comments.values()), "permission first"
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OP}", "alice")
    assert bot.run("run", bot.env("issue_comment", bot.comment_payload(issue, comment), sha)) == 0
    assert [r["content"] for r in bot.fake.reactions] == ["confused"]
    [reply] = [
        c["body"] for c in bot.fake.comments.values() if c["user"] == "kernel-foundry[bot]" and "alice" in c["body"]
    ]
    assert ".github/foundry.yml" in reply and "budget" in reply and "integer" in reply and bot.optimized == [OP]


# 6. a job stopped by its timeout keeps what finished -------------------------------------------------------
class JobKilled(BaseException):
    """What the runner's timeout does to the optimize job, in-process: nothing after it runs."""


def test_a_killed_optimize_job_keeps_the_operators_that_finished(bot, tmp_path) -> None:
    bot.candidates.update({OP: kernel_source(2.0), "ops/slow.py": kernel_source(5.0)})
    sha = bot.dev.commit({OP: operator_source(2.0), "ops/slow.py": operator_source(5.0)}, "two operators")
    bot.dev.push()
    payload = bot.push_payload(ZERO, sha)
    artifacts = tmp_path / "artifacts"

    def killed_on_the_second(env, op, out_dir) -> int:
        if op.ref != OP:
            raise JobKilled(op.ref)
        return bot.check_optimizer(env, op, out_dir)

    parts = action.Parts(api_factory=bot.api, optimizer=killed_on_the_second)
    with pytest.raises(JobKilled):
        action.optimize(bot.env("push", payload, sha), artifacts, parts)
    env = bot.env("push", payload, sha)
    assert bot.run("publish", env, artifacts) == 1, "an unfinished operator is a failure to report"
    [made] = bot.fake.open_pulls()
    assert made["head"] == MAIN_BRANCH and bot.branch_file(MAIN_BRANCH, KERNEL) == kernel_source(2.0)
    summary = env.step_summary.read_text()
    assert "`ops/slow.py`: not finished: the optimize job stopped" in summary


# 7. publish trusts its own plan, builds its own words ---------------------------------------------------
def test_publish_refuses_unplanned_operators_and_never_copies_report_strings(bot, tmp_path) -> None:
    bot.dev.commit({"ops/other.py": operator_source(2.0)}, "an operator nobody changes later")
    base = bot.dev.push()
    bot.candidates[OP] = kernel_source(2.0)
    sha = bot.dev.commit({OP: operator_source(2.0)}, "add scale")
    bot.dev.push()
    payload = bot.push_payload(base, sha)
    artifacts = tmp_path / "artifacts"
    assert bot.run("optimize", bot.env("push", payload, sha), artifacts) == 0
    plan = json.loads((artifacts / "plan.json").read_text())
    assert [o["ref"] for o in plan["operators"]] == [OP]
    # the artifact is edited: an operator triage never planned, and hostile strings in the report
    report = json.loads((artifacts / "ops-scale" / "report.json").read_text())
    hostile = "closes #1 @alice\n\nCo-authored-by: Mallory <m@example.com>"
    report["device"] = hostile
    report["best"].update(expert=hostile, writer=hostile, id=hostile)
    (artifacts / "ops-scale" / "report.json").write_text(json.dumps(report))
    shutil.copytree(artifacts / "ops-scale", artifacts / "ops-other")
    report["operator"].update(path="ops/other.py", name="ops-other")
    (artifacts / "ops-other" / "report.json").write_text(json.dumps(report))
    extra = dict(plan["operators"][0], ref="ops/other.py", slug="ops-other")
    (artifacts / "plan.json").write_text(json.dumps(dict(plan, operators=[*plan["operators"], extra])))

    env = bot.env("push", payload, sha)
    assert bot.run("publish", env, artifacts) == 1
    assert [p["head"] for p in bot.fake.open_pulls()] == [MAIN_BRANCH]
    assert bot.branch_sha("foundry/main/ops-other") is None
    assert "`ops/other.py`: triage did not plan this operator" in env.step_summary.read_text()
    message = subprocess.run(
        ["git", "-C", str(bot.bare), "log", "-1", "--format=%B", f"refs/heads/{MAIN_BRANCH}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for word in ("closes", "@alice", "Co-authored-by", "Mallory"):
        assert word not in message and word not in bot.fake.open_pulls()[0]["title"]
    assert message.startswith(f"Kernel Foundry: verified Triton kernel for {OP}")


# mutations that survived: a configured min_speedup decides publishing ------------------------------------
def test_the_configured_min_speedup_decides_whether_a_measured_kernel_is_published(bot, tmp_path) -> None:
    config = "pull_requests: {min_speedup: 1.5}\n"
    bot.candidates[OP] = kernel_source(2.0)
    sha = bot.dev.commit({OP: operator_source(2.0), ".github/foundry.yml": config}, "add scale")
    bot.dev.push()
    payload = bot.push_payload(ZERO, sha)

    def measured(eager_ms: float):
        def optimizer(env, op, out_dir) -> int:  # the stand-in's verdict, timed as a GPU job would report
            code = bot.check_optimizer(env, op, out_dir)
            report = RunReport.model_validate_json((out_dir / "report.json").read_text())
            timing = Timing(measured=True, device="GPU", trials=100, candidate_ms=0.01, eager_ms=eager_ms)
            verdict = report.best_verdict.model_copy(update={"timing": timing})
            report = report.model_copy(update={"best_verdict": verdict, "timing_measured": True})
            (out_dir / "report.json").write_text(report.model_dump_json())
            return code

        return action.Parts(api_factory=bot.api, optimizer=optimizer)

    env = bot.env("push", payload, sha)
    assert action.run_all(env, tmp_path / "a1", measured(eager_ms=0.012)) == 0  # 1.20×: over 1.05, under 1.5
    assert bot.fake.pulls == {} and bot.branch_sha(MAIN_BRANCH) is None
    assert "1.20× over eager is below min\\_speedup 1.50×" in env.step_summary.read_text()
    env = bot.env("push", payload, sha)
    assert action.run_all(env, tmp_path / "a2", measured(eager_ms=0.02)) == 0  # 2.00×
    [pull] = bot.fake.open_pulls()
    assert pull["draft"] is False and "2.00× faster than eager" in pull["title"]
    assert read_outputs(env)["best-speedup"] == "2.000"
