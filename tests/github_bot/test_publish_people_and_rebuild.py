"""Publish against GitHub's less friendly answers and a base that moved: list pages past the first, a
repository without draft pull requests, assignees and reviewers from the config (refusals reported, never
fatal), and the rebuild of a conflicted pull request (never over someone else's commit). Real git, the fake
API through PyGithub."""

from __future__ import annotations

from pathlib import Path

import pytest
from foundry.github.api import GitHubApi, GitHubApiError
from foundry.github.config import ConfigError, parse_config
from foundry.github.gitrepo import GitRepo
from foundry.github.publish import branch_name, decide, marker_key, publish_operator, rebuild_conflicted
from gitfixtures import checkout, git
from test_publish_pr import KERNEL, report

OP = "ops/scale.py"
BRANCH = "foundry/main/ops-scale"


def _crowd(fake, n: int) -> None:
    """n open pull requests by people, newer than anything the bot opened before."""
    for i in range(n):
        fake.open_pull(f"feature-{i}", title=f"feature {i}")


def test_the_bots_pull_request_is_found_past_the_first_page(api: GitHubApi, fake, remote, tmp_path: Path) -> None:
    bare, dev = remote
    sha = dev.commit({OP: "class Model: ...\n"})
    dev.push()
    work = GitRepo(checkout(bare, tmp_path / "runner", sha))
    first = publish_operator(
        api=api,
        git=work,
        ref=OP,
        report=report(),
        kernel_source=KERNEL,
        head=sha,
        base_branch="main",
        config=parse_config(None),
    )
    assert first.action == "created"
    _crowd(fake, 35)
    fake.filters_heads = False  # whatever the server filters, the bot pages through and checks each head
    found = api.find_pull(BRANCH, marker_key(OP, "main"))
    assert found is not None and found.number == first.pr_number
    pages = [c.query.get("page", ["1"])[0] for c in fake.calls if c.method == "GET" and c.path.endswith("/pulls")]
    assert "2" in pages, "the bot's pull request is the oldest: on the second page of 36"
    into_main = api.open_pulls_into("main", "<!-- kernel-foundry:pull-request ")
    assert [p.number for p in into_main] == [first.pr_number]
    # and the next run updates it instead of failing on "a pull request already exists"
    again = publish_operator(
        api=api,
        git=work,
        ref=OP,
        report=report(cand=0.01),
        kernel_source=KERNEL,
        head=sha,
        base_branch="main",
        config=parse_config(None),
    )
    assert again.action == "updated" and again.pr_number == first.pr_number
    assert len(fake.open_pulls()) == 36


def test_a_repository_without_draft_pull_requests_gets_a_ready_one(api: GitHubApi, fake, remote, tmp_path) -> None:
    bare, dev = remote
    sha = dev.commit({OP: "class Model: ...\n"})
    dev.push()
    fake.drafts_supported = False
    outcome = publish_operator(
        api=api,
        git=GitRepo(checkout(bare, tmp_path / "runner", sha)),
        ref=OP,
        report=report(eager=None),
        kernel_source=KERNEL,
        head=sha,
        base_branch="main",
        config=parse_config(None),
    )
    assert outcome.action == "created"
    assert fake.pulls[outcome.pr_number]["draft"] is False
    assert any("does not support draft pull requests" in w for w in outcome.warnings)
    posts = [c for c in fake.calls if c.method == "POST" and c.path.endswith("/pulls")]
    assert [c.body["draft"] for c in posts] == [True, False] and [c.status for c in posts] == [422, 201]


def test_validation_failures_say_why(api: GitHubApi, fake) -> None:
    """GitHub's 422 puts the reason in errors[].message; the bot's message carries it."""
    number = fake.open_pull("feature")
    fake.pulls[number]["user"] = "kernel-foundry[bot]"
    with pytest.raises(GitHubApiError, match="not a collaborator of the acme/models repository") as err:
        api.request_reviewers(number, ("mallory",), ())
    assert err.value.status == 422


def test_assignees_and_reviewers_are_asked_for_on_creation_only(api: GitHubApi, fake, remote, tmp_path) -> None:
    bare, dev = remote
    sha = dev.commit({OP: "class Model: ...\n"})
    dev.push()
    fake.permissions.update({"carol": "write", "dave": "read"})
    fake.assignable = {"carol", "dave"}
    fake.teams = {"kernels"}
    config = parse_config("pull_requests:\n  assignees: [carol, ghost]\n  reviewers: [dave, acme/kernels, mallory]\n")
    work = GitRepo(checkout(bare, tmp_path / "runner", sha))
    common = dict(api=api, git=work, ref=OP, kernel_source=KERNEL, head=sha, base_branch="main", config=config)
    outcome = publish_operator(report=report(), **common)
    assert outcome.action == "created", outcome.reason
    assert fake.issues[outcome.pr_number]["assignees"] == ["carol"]
    assert any("not assigned: ghost" in w for w in outcome.warnings)
    assert any("reviews not requested" in w and "not a collaborator" in w for w in outcome.warnings)
    assert "reviewers" not in fake.pulls[outcome.pr_number], "GitHub requests none when one reviewer is refused"
    # the people the config names are asked once: an update leaves what maintainers changed since alone
    fake.permissions.pop("mallory", None)
    writes = len([c for c in fake.writes() if "assignees" in c.path or "requested_reviewers" in c.path])
    updated = publish_operator(report=report(cand=0.01), **common)
    assert updated.action == "updated" and updated.warnings == ()
    assert len([c for c in fake.writes() if "assignees" in c.path or "requested_reviewers" in c.path]) == writes


def test_reviewers_that_github_accepts(api: GitHubApi, fake, remote, tmp_path) -> None:
    bare, dev = remote
    sha = dev.commit({OP: "class Model: ...\n"})
    dev.push()
    fake.permissions["dave"] = "read"
    fake.teams = {"kernels"}
    config = parse_config("pull_requests: {reviewers: [dave, acme/kernels]}")
    outcome = publish_operator(
        api=api,
        git=GitRepo(checkout(bare, tmp_path / "runner", sha)),
        ref=OP,
        report=report(),
        kernel_source=KERNEL,
        head=sha,
        base_branch="main",
        config=config,
    )
    assert outcome.action == "created" and outcome.warnings == ()
    pull = fake.pulls[outcome.pr_number]
    assert (pull["reviewers"], pull["team_reviewers"]) == (["dave"], ["kernels"])


@pytest.mark.parametrize("bad", ["'@carol'", "carol--x", "'acme/Kernels Team'", "[1]"])
def test_people_in_the_config_are_checked(bad: str) -> None:
    with pytest.raises(ConfigError, match="pull_requests.reviewers"):
        parse_config(f"pull_requests: {{reviewers: [{bad}]}}")


def test_a_configured_min_speedup_decides(api: GitHubApi, fake, remote, tmp_path) -> None:
    """2.40× passes the default 1.05× but not a configured 3×: no branch, no pull request."""
    bare, dev = remote
    sha = dev.commit({OP: "class Model: ...\n"})
    dev.push()
    config = parse_config("pull_requests: {min_speedup: 3.0}")
    publish, _, why = decide(report(), config)
    assert not publish and "below min_speedup 3.00×" in why
    assert decide(report(), parse_config("pull_requests: {min_speedup: 2.0}"))[0]
    outcome = publish_operator(
        api=api,
        git=GitRepo(checkout(bare, tmp_path / "runner", sha)),
        ref=OP,
        report=report(),
        kernel_source=KERNEL,
        head=sha,
        base_branch="main",
        config=config,
    )
    assert outcome.action == "skipped" and "below min_speedup 3.00×" in outcome.reason
    assert fake.writes() == [] and fake.pulls == {}


# a base that moved ---------------------------------------------------------------------------------------
def _published(api, fake, remote, tmp_path, *, name: str = "runner"):
    bare, dev = remote
    sha = dev.commit({OP: "class Model: ...\n", "README.md": "x\n"})
    dev.push()
    work = GitRepo(checkout(bare, tmp_path / name, sha))
    outcome = publish_operator(
        api=api,
        git=work,
        ref=OP,
        report=report(),
        kernel_source=KERNEL,
        head=sha,
        base_branch="main",
        config=parse_config(None),
        source="ab12",
    )
    assert outcome.action == "created"
    return bare, dev, outcome


def _branch(bare: Path) -> str:
    return git(bare, "rev-parse", f"refs/heads/{BRANCH}")


def test_a_conflicted_pull_request_is_rebuilt_on_its_moved_base(api: GitHubApi, fake, remote, tmp_path) -> None:
    bare, dev, outcome = _published(api, fake, remote, tmp_path)
    old = _branch(bare)
    # main gets its own ops/scale_foundry.py (another route, by hand): the bot's branch no longer merges
    moved = dev.commit({"ops/scale_foundry.py": "# a hand-written kernel\n", "README.md": "y\n"})
    dev.push()
    work = GitRepo(checkout(bare, tmp_path / "later", moved))
    assert work.conflicts(moved, old)
    done = rebuild_conflicted(api=api, git=work, head=moved, base_branch="main", fingerprint=lambda ref: "ab12")
    assert [(o.action, o.pr_number) for o in done] == [("rebuilt", outcome.pr_number)]
    new = _branch(bare)
    assert new != old and git(bare, "rev-parse", f"{new}^1") == moved
    assert git(bare, "show", f"{new}:ops/scale_foundry.py") == KERNEL.rstrip("\n")
    assert git(bare, "log", "-1", "--format=%an", new) == "kernel-foundry[bot]"
    assert not work.conflicts(moved, new)
    comments = [fake.comments[c]["body"] for c in fake.issues[outcome.pr_number]["comments"]]
    assert any("conflicted with `main`" in c for c in comments)
    # a second pass finds nothing to do
    assert rebuild_conflicted(api=api, git=work, head=moved, base_branch="main", fingerprint=lambda ref: "ab12") == []


def test_a_clean_move_of_the_base_leaves_the_branch_alone(api: GitHubApi, fake, remote, tmp_path) -> None:
    bare, dev, _ = _published(api, fake, remote, tmp_path)
    old = _branch(bare)
    moved = dev.commit({"README.md": "y\n"})
    dev.push()
    work = GitRepo(checkout(bare, tmp_path / "later", moved))
    assert rebuild_conflicted(api=api, git=work, head=moved, base_branch="main", fingerprint=lambda ref: "ab12") == []
    assert _branch(bare) == old


def test_a_conflicted_branch_with_a_maintainers_commit_is_held(api: GitHubApi, fake, remote, tmp_path) -> None:
    bare, dev, outcome = _published(api, fake, remote, tmp_path)
    fixer = checkout(bare, tmp_path / "fixer", _branch(bare))
    (fixer / "ops" / "scale_foundry.py").write_text(KERNEL + "# tuned by hand\n")
    git(fixer, "commit", "-qam", "tune")
    git(fixer, "push", "-q", "origin", f"HEAD:refs/heads/{BRANCH}")
    human = _branch(bare)
    moved = dev.commit({"ops/scale_foundry.py": "# main's own\n"})
    dev.push()
    work = GitRepo(checkout(bare, tmp_path / "later", moved))
    done = rebuild_conflicted(api=api, git=work, head=moved, base_branch="main", fingerprint=lambda ref: "ab12")
    assert [o.action for o in done] == ["held"] and "resolve the conflict" in done[0].reason
    assert _branch(bare) == human, "never rewritten over someone else's commit"


def test_a_conflicted_pull_request_for_a_changed_operator_waits_for_its_run(api, fake, remote, tmp_path) -> None:
    bare, dev, _ = _published(api, fake, remote, tmp_path)
    old = _branch(bare)
    moved = dev.commit({"ops/scale_foundry.py": "# main's own\n"})
    dev.push()
    work = GitRepo(checkout(bare, tmp_path / "later", moved))
    done = rebuild_conflicted(api=api, git=work, head=moved, base_branch="main", fingerprint=lambda ref: "cd34")
    assert [o.action for o in done] == ["skipped"] and "operator changed" in done[0].reason
    assert _branch(bare) == old


def test_branch_names_keep_the_class() -> None:
    assert branch_name("ops/net.py::LayerNorm", "main") != branch_name("ops/net.py::Gelu", "main")
