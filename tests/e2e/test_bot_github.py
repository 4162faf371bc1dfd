"""The bot end to end against the local GitHub-compatible server and real git repositories.
Candidates are verified for real (`foundry check` under the Triton interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_github import ISSUES_TOKEN
from foundry.core.records import RunReport
from harness import ZERO, kernel_source, operator_source, read_outputs

pytestmark = pytest.mark.e2e

OP = "ops/scale.py"
BOT = str(Path(__file__).resolve().parents[2] / "bot")  # this checkout's bot, whatever an editable install names
BRANCH = "foundry/main/ops-scale"
KERNEL = "ops/scale_foundry.py"


def first_push(bot) -> str:
    bot.candidates[OP] = kernel_source(2.0)
    sha = bot.dev.commit({OP: operator_source(2.0), "README.md": "models\n"}, "add scale")
    bot.dev.push()
    return sha


def test_push_adds_operator_then_updates_the_same_pr_then_ignores_noise(bot) -> None:
    sha1 = first_push(bot)
    env = bot.env("push", bot.push_payload(ZERO, sha1), sha1)
    assert bot.run("run", env) == 0
    assert bot.optimized == [OP]
    pulls = bot.fake.open_pulls()
    assert len(pulls) == 1
    pull = pulls[0]
    assert (pull["head"], pull["base"]) == (BRANCH, "main")
    assert pull["draft"] is True, "timing was not measured: a draft"
    assert "timing not measured" in pull["title"]
    assert pull["body"].startswith("<!-- kernel-foundry:pull-request operator=ops-scale base=main ")
    assert "not measured (needs a GPU)" in pull["body"]
    assert "| correctness trials | 3 |" in pull["body"]
    assert bot.branch_file(BRANCH, KERNEL) == kernel_source(2.0)
    assert bot.branch_file(BRANCH, OP) == operator_source(2.0)
    assert bot.fake.issues[pull["number"]]["labels"] == ["performance", "foundry"]
    outputs = read_outputs(env)
    assert outputs["pr-number"] == str(pull["number"])
    assert outputs["pr-url"].endswith(f"/acme/models/pull/{pull['number']}")
    assert outputs["best-speedup"] == ""  # nothing measured, nothing invented
    summary = env.step_summary.read_text()
    assert f"pull request #{pull['number']} created" in summary and "## Kernel Foundry report" in summary
    first_branch_sha = bot.branch_sha(BRANCH)

    # a second push changes the operator: the same PR is updated, its branch moves
    bot.candidates[OP] = kernel_source(3.0)
    sha2 = bot.dev.commit({OP: operator_source(3.0)}, "scale by 3")
    bot.dev.push()
    env2 = bot.env("push", bot.push_payload(sha1, sha2), sha2)
    assert bot.run("run", env2) == 0
    assert len(bot.fake.pulls) == 1 and len(bot.fake.open_pulls()) == 1
    assert bot.branch_file(BRANCH, KERNEL) == kernel_source(3.0)
    assert bot.branch_sha(BRANCH) != first_branch_sha
    assert read_outputs(env2)["pr-number"] == str(pull["number"])
    patches = [c for c in bot.fake.writes() if c.method == "PATCH" and c.path.endswith(f"/pulls/{pull['number']}")]
    assert len(patches) == 1 and "y = relu(x) \\* 3.0" not in patches[0].body["body"]

    # a push changing nothing relevant: no optimizer, no write to GitHub
    writes_before = len(bot.fake.writes())
    sha3 = bot.dev.commit({"README.md": "models, faster\n", "ops/scale.py": operator_source(3.0) + "# note\n"})
    bot.dev.push()
    env3 = bot.env("push", bot.push_payload(sha2, sha3), sha3)
    assert bot.run("run", env3) == 0
    assert bot.optimized == [OP, OP]
    assert len(bot.fake.writes()) == writes_before
    assert read_outputs(env3)["run"] == "false"
    assert "no new or changed operator" in env3.step_summary.read_text()


def test_rerun_of_the_same_push_changes_nothing_but_the_body(bot) -> None:
    sha = first_push(bot)
    for _ in range(2):
        env = bot.env("push", bot.push_payload(ZERO, sha), sha)
        assert bot.run("run", env) == 0
    assert len(bot.fake.pulls) == 1
    log = subprocess.run(
        ["git", "-C", str(bot.bare), "rev-list", "--count", f"refs/heads/{BRANCH}"], capture_output=True, text=True
    )
    assert log.stdout.strip() == "2", "the branch was not rewritten for an identical kernel"


def test_comment_by_collaborator_reacts_reports_and_opens_pr(bot) -> None:
    sha = first_push(bot)
    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue("make scale fast")
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OP} --budget 3\nplease", "alice")
    env = bot.env("issue_comment", bot.comment_payload(issue, comment), sha)
    assert bot.run("run", env) == 0
    assert [r["content"] for r in bot.fake.reactions] == ["eyes", "rocket"]
    status = [c for c in bot.fake.comments.values() if f"status comment={comment['id']}" in c["body"]]
    assert len(status) == 1, "one status comment, edited in place"
    body = status[0]["body"]
    pull = bot.fake.open_pulls()[0]
    assert f"pull request #{pull['number']} created" in body and "finished" in body
    assert f"/actions/runs/{env.run_id}" in body
    edits = [c for c in bot.fake.writes() if c.method == "PATCH" and "/issues/comments/" in c.path]
    assert edits, "the status comment was edited as the run progressed"
    assert (pull["head"], pull["base"]) == (BRANCH, "main")
    assert bot.optimized == [OP]
    order = [c.path.rsplit("/", 1)[-1] for c in bot.fake.writes()]
    assert order[0] == "reactions" and order[-1] == "reactions"


def test_comment_on_a_pull_request_optimizes_what_it_changed(bot) -> None:
    first_push(bot)
    bot.dev.commit({"ops/other.py": operator_source(5.0)}, "another op")
    head = bot.dev.push("feature")
    bot.candidates["ops/other.py"] = kernel_source(5.0)
    bot.fake.permissions["alice"] = "maintain"
    number = bot.fake.open_issue("feature")
    bot.fake.pulls[number] = {
        "number": number,
        "head": "feature",
        "base": "main",
        "title": "feature",
        "body": "",
        "draft": False,
        "state": "open",
        "user": "alice",
    }
    comment = bot.fake.add_comment(number, "/foundry optimize", "alice")
    main_sha = bot.branch_sha("main")
    env = bot.env("issue_comment", bot.comment_payload(number, comment, pull=True), main_sha)
    assert bot.run("run", env) == 0
    assert bot.optimized == ["ops/other.py"], "only what the pull request changed"
    made = [p for p in bot.fake.open_pulls() if p["head"].startswith("foundry/")]
    assert [(p["head"], p["base"]) for p in made] == [("foundry/feature/ops-other", "feature")]
    assert bot.branch_file("foundry/feature/ops-other", "ops/other_foundry.py") == kernel_source(5.0)
    assert head == bot.branch_sha("feature")


@pytest.mark.parametrize(("login", "permission"), [("reader", "read"), ("tri", "triage")])
def test_comment_without_write_access_is_refused_politely(bot, login: str, permission: str) -> None:
    sha = first_push(bot)
    bot.fake.permissions[login] = permission
    issue = bot.fake.open_issue()
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OP}", login)
    env = bot.env("issue_comment", bot.comment_payload(issue, comment), sha)
    assert bot.run("run", env) == 0
    assert bot.optimized == []
    assert bot.fake.reactions == [] and bot.fake.pulls == {}
    replies = [c for c in bot.fake.comments.values() if c["user"] == "kernel-foundry[bot]"]
    assert len(replies) == 1
    assert f"@{login} thanks" in replies[0]["body"] and "write access" in replies[0]["body"]


@pytest.mark.parametrize(
    ("login", "action_name", "body"),
    [
        ("dependabot[bot]", "created", f"/foundry optimize {OP}"),
        ("alice", "edited", f"/foundry optimize {OP}"),
        ("alice", "deleted", f"/foundry optimize {OP}"),
        ("alice", "created", "nice work, maybe /foundry optimize later"),
    ],
)
def test_ignored_comments_cause_no_writes(bot, login: str, action_name: str, body: str) -> None:
    sha = first_push(bot)
    bot.fake.permissions.update({"alice": "admin", "dependabot[bot]": "write"})
    issue = bot.fake.open_issue()
    comment = bot.fake.add_comment(issue, body, login)
    env = bot.env("issue_comment", bot.comment_payload(issue, comment, action_name=action_name), sha)
    assert bot.run("run", env) == 0
    assert bot.fake.writes() == [] and bot.optimized == []
    assert not any(c.path.endswith("/permission") for c in bot.fake.calls), "no API call for an ignored comment"


def test_bad_commands_get_help(bot) -> None:
    sha = first_push(bot)
    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue()
    for text in ("/foundry optimise", "/foundry optimize --budget 9999", "/foundry optimize ops/missing.py"):
        comment = bot.fake.add_comment(issue, text, "alice")
        env = bot.env("issue_comment", bot.comment_payload(issue, comment), sha)
        assert bot.run("run", env) == 0
    bodies = [c["body"] for c in bot.fake.comments.values() if c["user"] == "kernel-foundry[bot]"]
    assert any("unknown command `optimise`" in b and "Usage:" in b for b in bodies)
    assert any("from 1 to 64" in b for b in bodies)
    assert any("ops/missing.py does not exist" in b for b in bodies)
    assert [r["content"] for r in bot.fake.reactions] == ["eyes", "confused"]  # only the last one ran
    assert bot.optimized == [] and bot.fake.pulls == {}


def test_injected_text_is_never_executed(bot, tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    sha = first_push(bot)
    bot.fake.permissions["alice"] = "admin"
    issue = bot.fake.open_issue()
    hostile = [
        f"/foundry optimize {OP};touch${{IFS}}{canary}",
        f"/foundry optimize $(touch {canary}).py",
        f"/foundry optimize `touch {canary}`",
        f"/foundry optimize {OP} --budget 2$(touch {canary})",
    ]
    for text in hostile:
        comment = bot.fake.add_comment(issue, text, "alice")
        env = bot.env("issue_comment", bot.comment_payload(issue, comment), sha)
        assert bot.run("run", env) == 0
    assert bot.optimized == [] and not canary.exists()
    # a branch whose name is a command: pushed, optimized, published — and never run
    branch = f"x$(touch${{IFS}}{canary.name})"
    bot.dev.commit({"ops/b.py": operator_source(4.0)}, f"$(touch {canary})")
    sha2 = bot.dev.push(branch)
    bot.candidates["ops/b.py"] = kernel_source(4.0)
    env = bot.env("push", bot.push_payload(sha, sha2, branch=branch), sha2)
    assert bot.run("run", env) == 0
    assert [p["base"] for p in bot.fake.open_pulls()] == [branch]
    assert not canary.exists() and not (env.workspace / canary.name).exists()
    assert not (Path.cwd() / canary.name).exists()


def test_fork_pull_requests_never_reach_the_gpu(bot) -> None:
    first_push(bot)
    bot.dev.commit({"ops/fork.py": operator_source(6.0)})
    bot.dev.push("forked")
    bot.fake.permissions["alice"] = "admin"
    number = bot.fake.open_issue()
    bot.fake.pulls[number] = {
        "number": number,
        "head": "forked",
        "base": "main",
        "title": "f",
        "body": "",
        "draft": False,
        "state": "open",
    }
    bot.fake.fork_pulls.add(number)
    comment = bot.fake.add_comment(number, "/foundry optimize ops/fork.py", "alice")
    env = bot.env("issue_comment", bot.comment_payload(number, comment, pull=True), bot.branch_sha("main"))
    assert bot.run("run", env) == 0
    assert bot.optimized == []
    reply = [c["body"] for c in bot.fake.comments.values() if c["user"] == "kernel-foundry[bot]"]
    assert len(reply) == 1 and "comes from a fork" in reply[0]


def test_no_verified_gain_means_no_pr_and_says_why(bot) -> None:
    bot.candidates[OP] = kernel_source(5.0)  # computes relu(x) * 5 for an operator that scales by 2
    sha = bot.dev.commit({OP: operator_source(2.0)})
    bot.dev.push()
    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue()
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OP}", "alice")
    env = bot.env("issue_comment", bot.comment_payload(issue, comment), sha)
    assert bot.run("run", env) == 0
    assert bot.fake.pulls == {} and bot.branch_sha(BRANCH) is None
    status = next(c["body"] for c in bot.fake.comments.values() if "kernel-foundry:status" in c["body"])
    assert "no pull request" in status and "no candidate passed verification" in status and "mismatch" in status
    assert [r["content"] for r in bot.fake.reactions] == ["eyes", "confused"]
    summary = env.step_summary.read_text()
    assert "No verified kernel" in summary and "mismatch" in summary
    assert read_outputs(env)["pr-number"] == ""


def test_api_faults_are_retried_without_duplicates(bot) -> None:
    sha = first_push(bot)
    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue()
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OP}", "alice")
    bot.fake.inject("GET", r"/permission$", status=502)
    bot.fake.inject("POST", r"/reactions$", status=500)
    bot.fake.inject(
        "POST",
        r"/issues/\d+/comments$",
        status=403,
        headers={"Retry-After": "3"},
        message="You have exceeded a secondary rate limit",
    )
    bot.fake.inject("PATCH", r"/issues/comments/\d+$", status=503)
    bot.fake.inject("POST", r"/pulls$", status=201, delay_s=1.6, process=True)  # made, but the answer is lost
    bot.fake.inject("POST", r"/labels$", status=500)
    env = bot.env("issue_comment", bot.comment_payload(issue, comment), sha)
    assert bot.run("run", env) == 0
    assert len(bot.fake.pulls) == 1
    assert sum("kernel-foundry:status" in c["body"] for c in bot.fake.comments.values()) == 1
    assert sorted(r["content"] for r in bot.fake.reactions) == ["eyes", "rocket"]
    assert 3.0 in bot.sleeps.waits
    assert sum(1 for c in bot.fake.calls if c.method == "POST" and c.path.endswith("/pulls")) == 1
    assert bot.fake.issues[next(iter(bot.fake.pulls))]["labels"] == ["performance", "foundry"]
    assert all(f.times == 0 for f in bot.fake.faults), "every fault was hit"


def test_failure_midway_leaves_no_half_made_pr(bot) -> None:
    sha = first_push(bot)
    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue()
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OP}", "alice")
    bot.fake.inject("POST", r"/pulls$", status=500, times=100)
    env = bot.env("issue_comment", bot.comment_payload(issue, comment), sha)
    assert bot.run("run", env) == 1
    assert bot.fake.pulls == {}
    assert bot.branch_sha(BRANCH) is None, "the pushed branch was deleted again"
    status = next(c["body"] for c in bot.fake.comments.values() if "kernel-foundry:status" in c["body"])
    assert "gave up after" in status and "deleted again" in status
    assert [r["content"] for r in bot.fake.reactions] == ["eyes", "confused"]
    assert "gave up after" in env.step_summary.read_text()


def test_failed_update_restores_the_branch(bot) -> None:
    sha1 = first_push(bot)
    assert bot.run("run", bot.env("push", bot.push_payload(ZERO, sha1), sha1)) == 0
    before = bot.branch_sha(BRANCH)
    bot.candidates[OP] = kernel_source(3.0)
    sha2 = bot.dev.commit({OP: operator_source(3.0)})
    bot.dev.push()
    bot.fake.inject("PATCH", r"/pulls/\d+$", status=500, times=100)
    assert bot.run("run", bot.env("push", bot.push_payload(sha1, sha2), sha2)) == 1
    assert bot.branch_sha(BRANCH) == before, "the PR's branch was put back where it was"
    assert len(bot.fake.pulls) == 1


def test_two_jobs_read_only_optimize_then_publish(bot, tmp_path: Path) -> None:
    sha = first_push(bot)
    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue()
    comment = bot.fake.add_comment(issue, f"/foundry optimize {OP}", "alice")
    payload = bot.comment_payload(issue, comment)
    triage_env = bot.env("issue_comment", payload, sha)
    assert bot.run("triage", triage_env) == 0
    outputs = read_outputs(triage_env)
    assert outputs["run"] == "true" and json.loads(outputs["operators"]) == [OP] and outputs["head"] == sha
    assert [r["content"] for r in bot.fake.reactions] == ["eyes"]
    writes = len(bot.fake.writes())
    artifacts = tmp_path / "downloaded"
    optimize_env = bot.env("issue_comment", payload, sha, token=ISSUES_TOKEN)  # the GPU job's token
    assert bot.run("optimize", optimize_env, artifacts) == 0
    gpu = bot.fake.writes()[writes:]
    assert gpu and all(c.method == "PATCH" and "/issues/comments/" in c.path for c in gpu), (
        "the optimize job edits the status comment and writes nothing else to GitHub"
    )
    assert RunReport.model_validate_json((artifacts / "ops-scale" / "report.json").read_text()).verified
    publish_env = bot.env("issue_comment", payload, sha)
    assert bot.run("publish", publish_env, artifacts) == 0
    assert len(bot.fake.open_pulls()) == 1
    assert [r["content"] for r in bot.fake.reactions] == ["eyes", "rocket"]
    assert read_outputs(publish_env)["pr-number"] == str(bot.fake.open_pulls()[0]["number"])


def test_publish_treats_artifacts_as_data(bot, tmp_path: Path) -> None:
    sha = first_push(bot)
    payload = bot.push_payload(ZERO, sha)
    artifacts = tmp_path / "artifacts"
    assert bot.run("optimize", bot.env("push", payload, sha), artifacts) == 0
    plan = json.loads((artifacts / "plan.json").read_text())
    evil = dict(plan["operators"][0], ref="../../outside.py", slug="outside")
    (artifacts / "plan.json").write_text(json.dumps(dict(plan, operators=[evil, plan["operators"][0]])))
    (artifacts / "ops-scale" / "report.json").write_text('{"operator": "not a report"}')
    env = bot.env("push", payload, sha)
    assert bot.run("publish", env, artifacts) == 1
    assert bot.fake.pulls == {} and bot.branch_sha(BRANCH) is None
    summary = env.step_summary.read_text()
    assert "invalid operator" in summary and "is not a RunReport" in summary
    assert not (tmp_path / "outside_foundry.py").exists()
    (artifacts / "plan.json").write_text("[]")
    env = bot.env("push", payload, sha)
    assert bot.run("publish", env, artifacts) == 1
    assert "is not a plan" in env.step_summary.read_text()


def test_workflow_dispatch_with_an_operator(bot) -> None:
    sha = first_push(bot)
    payload = {
        "ref": "refs/heads/main",
        "inputs": {"operator": OP, "budget": "2"},
        "repository": bot.repository(),
        "sender": {"login": "dev"},
    }
    env = bot.env("workflow_dispatch", payload, sha)
    assert bot.run("run", env) == 0
    assert bot.optimized == [OP] and len(bot.fake.open_pulls()) == 1
    bad = dict(payload, inputs={"operator": "ops/x.py; rm -rf /"})
    env = bot.env("workflow_dispatch", bad, sha)
    assert bot.run("run", env) == 0
    assert "is not path/to/file.py" in env.step_summary.read_text()
    assert bot.optimized == [OP]


def test_cli_rejects_malformed_payloads_clearly(bot, tmp_path: Path) -> None:
    sha = first_push(bot)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "created", "issue": {"number": 1}, "repository": bot.repository()}))
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONPATH": BOT,
        "GITHUB_EVENT_NAME": "issue_comment",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "acme/models",
        "GITHUB_SHA": sha,
        "GITHUB_WORKSPACE": str(bot.dev.path),
        "GITHUB_API_URL": bot.fake.api_url,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "foundry", "action", "triage"], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert "malformed issue_comment payload: field `comment`" in proc.stderr
    del env["GITHUB_EVENT_PATH"]
    proc = subprocess.run(
        [sys.executable, "-m", "foundry", "action", "run"], env=env, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2 and "GITHUB_EVENT_PATH not set" in proc.stderr
    assert bot.fake.calls == []


def test_action_step_never_imports_modules_of_the_checkout(bot, tmp_path: Path) -> None:
    """The action runs the bot with PYTHONSAFEPATH (as action.yml sets it): a repository that ships
    a `yaml.py` or `pydantic.py` at its root cannot run code in the privileged jobs."""
    canary = tmp_path / "imported"
    trap = f"open({str(canary)!r}, 'w').write('x')\nraise SystemExit(99)\n"
    sha = bot.dev.commit({OP: operator_source(2.0), "pydantic.py": trap, "yaml.py": trap, "github.py": trap})
    bot.dev.push()
    env = bot.env("push", bot.push_payload(ZERO, sha), sha)
    child = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "PYTHONSAFEPATH": "1",
        "PYTHONPATH": BOT,
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(env.event_path),
        "GITHUB_REPOSITORY": "acme/models",
        "GITHUB_SHA": sha,
        "GITHUB_WORKSPACE": str(env.workspace),
        "GITHUB_API_URL": bot.fake.api_url,
        "GITHUB_OUTPUT": str(env.output),
        "GITHUB_TOKEN": "test-token-not-secret",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "foundry", "action", "triage"],
        cwd=env.workspace,
        env=child,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert not canary.exists()
    assert json.loads(read_outputs(env)["operators"]) == [OP]


def test_deleting_an_operator_closes_its_pr(bot) -> None:
    sha1 = first_push(bot)
    assert bot.run("run", bot.env("push", bot.push_payload(ZERO, sha1), sha1)) == 0
    number = bot.fake.open_pulls()[0]["number"]
    sha2 = bot.dev.commit({OP: None}, "drop scale")
    bot.dev.push()
    assert bot.run("run", bot.env("push", bot.push_payload(sha1, sha2), sha2)) == 0
    assert bot.fake.pulls[number]["state"] == "closed"
    notes = [c["body"] for c in bot.fake.comments.values() if c["issue"] == number]
    assert len(notes) == 1 and "was deleted" in notes[0]
    assert bot.optimized == [OP]


def test_a_new_branch_is_compared_with_the_default_branch(bot) -> None:
    first_push(bot)
    bot.dev.commit({"ops/extra.py": operator_source(7.0)}, "extra op on a new branch")
    sha = bot.dev.push("topic")
    bot.candidates["ops/extra.py"] = kernel_source(7.0)
    env = bot.env("push", bot.push_payload(ZERO, sha, branch="topic"), sha)
    assert bot.run("run", env) == 0
    assert bot.optimized == ["ops/extra.py"], "not every operator of the repository"
    assert [(p["head"], p["base"]) for p in bot.fake.open_pulls()] == [("foundry/topic/ops-extra", "topic")]


def test_publish_when_the_pull_request_moved_on_meanwhile(bot, tmp_path: Path) -> None:
    first_push(bot)
    bot.dev.commit({"ops/other.py": operator_source(5.0)}, "another op")
    optimized_head = bot.dev.push("feature")
    bot.candidates["ops/other.py"] = kernel_source(5.0)
    bot.fake.permissions["alice"] = "write"
    number = bot.fake.open_issue("feature")
    bot.fake.pulls[number] = {
        "number": number,
        "head": "feature",
        "base": "main",
        "title": "f",
        "body": "",
        "draft": False,
        "state": "open",
    }
    comment = bot.fake.add_comment(number, "/foundry optimize", "alice")
    payload = bot.comment_payload(number, comment, pull=True)
    main_sha = bot.branch_sha("main")
    artifacts = tmp_path / "artifacts"
    assert bot.run("optimize", bot.env("issue_comment", payload, main_sha), artifacts) == 0
    bot.dev.commit({"notes.txt": "later\n"}, "the PR moves on")
    bot.dev.push("feature")
    publish_env = bot.env("issue_comment", payload, optimized_head)  # the checkout triage asked for
    assert bot.run("publish", publish_env, artifacts) == 0
    made = bot.fake.open_pulls()[-1]
    assert made["head"] == "foundry/feature/ops-other" and made["base"] == "feature"
    parent = subprocess.run(
        ["git", "-C", str(bot.bare), "rev-parse", "refs/heads/foundry/feature/ops-other^"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert parent == optimized_head
    other = bot.fake.add_comment(number, "/foundry optimize", "alice")
    foreign = bot.env("issue_comment", bot.comment_payload(number, other, pull=True), optimized_head)
    assert bot.run("publish", foreign, artifacts) == 1
    assert "made for another event" in foreign.step_summary.read_text()
