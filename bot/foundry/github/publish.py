"""One pull request per operator and base branch: branch foundry/<base>/<slug>, the kernel next to
the operator, the report as the body, a hidden marker (operator, base) to find it again. An open PR
is updated, never duplicated; a failure half-way rolls the branch back, so no half-made PR is left
behind."""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from foundry.core.errors import FatalError
from foundry.core.records import RunReport
from foundry.github.api import GitHubApi, GitHubApiError, PullRef
from foundry.github.config import FoundryConfig
from foundry.github.detect import operator_slug, slugify
from foundry.github.events import valid_operator
from foundry.github.gitrepo import GitError, GitRepo
from foundry.report import render_pr_body

log = logging.getLogger(__name__)

BRANCH_PREFIX = "foundry/"
KERNEL_LIMIT = 512 * 1024  # bytes; a generated kernel is a few kB


class PublishError(FatalError):
    pass


class Outcome(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ref: str
    # held: someone else's commits; rebuilt: a conflicted branch made again on its moved base
    action: Literal["created", "updated", "rebuilt", "skipped", "held", "failed"]
    reason: str = ""
    branch: str = ""
    kernel_path: str = ""
    pr_number: int | None = None
    pr_url: str = ""
    speedup: float | None = None
    verified: bool = False
    warnings: tuple[str, ...] = ()


def base_key(base_branch: str) -> str:
    """The base branch as one ref component: `main` stays `main`; a name that had to change
    (`feature/x` → `feature-x-1b2c3d4e`) gets a hash of the original so two bases never share it."""
    key = slugify(base_branch)[:60].strip("-")
    if key != base_branch:
        key += "-" + hashlib.sha256(base_branch.encode()).hexdigest()[:8]
    return key


def branch_name(ref: str, base_branch: str) -> str:
    """foundry/<base>/<operator>: a push run on main and a comment run on a feature pull request
    never share a branch (always three components, so no branch name is a prefix of another)."""
    return f"{BRANCH_PREFIX}{base_key(base_branch)}/{operator_slug(ref)}"


def marker_key(ref: str, base_branch: str) -> str:
    """The part of the marker that identifies the pull request (what lookups match)."""
    return f"<!-- kernel-foundry:pull-request operator={operator_slug(ref)} base={base_key(base_branch)} "


def pr_marker(ref: str, base_branch: str, source: str = "") -> str:
    """The hidden marker: operator and base, and the operator's fingerprint (source) the kernel was
    made for, so that a closed pull request stays closed until the operator changes; with the fingerprint
    also the operator's ref (a validated `path.py[::Class]`, no spaces or `>`), which the rebuild of a
    conflicted pull request reads back."""
    return f"{marker_key(ref, base_branch)}{f'source={source} ref={ref} ' if source else ''}-->"


_MARKER = re.compile(
    r"<!-- kernel-foundry:pull-request operator=(\S+) base=(\S+) (?:source=([0-9a-f]{1,64}) )?(?:ref=(\S+) )?-->"
)


def marked_source(body: str, ref: str, base_branch: str) -> str:
    """The fingerprint a pull request body's marker records ('' when none)."""
    found = re.search(re.escape(marker_key(ref, base_branch)) + r"source=([0-9a-f]{1,64}) ", body)
    return found.group(1) if found else ""


def kernel_path(ref: str) -> str:
    """ops/foo.py → ops/foo_foundry.py; ops/foo.py::LayerNorm → ops/foo_layer_norm_foundry.py."""
    path, _, cls = ref.partition("::")
    stem = path[:-3]
    if cls and cls != "Model":
        stem += "_" + re.sub(r"(?<!^)(?=[A-Z])", "_", cls).lower()
    return f"{stem}_foundry.py"


def decide(report: RunReport, config: FoundryConfig) -> tuple[bool, bool, str]:
    """(open a PR?, as a draft?, why) — no verified gain, no PR."""
    if not report.verified or report.best is None:
        failure = report.best_verdict.failure if report.best_verdict else None
        top = max(report.failures.items(), key=lambda kv: kv[1])[0] if report.failures else None
        why = failure.headline() if failure else (f"most rejections: {top}" if top else "no candidate")
        return False, False, f"no candidate passed verification ({report.evaluated} evaluated; {why})"
    timing = report.timing
    if timing is None or not timing.measured or timing.speedup_eager is None:
        if not config.pull_requests.publish_unmeasured:
            return False, False, "verified, but timing was not measured (needs a GPU) and publish_unmeasured is off"
        return True, config.pull_requests.draft_when_unmeasured, "verified; timing not measured (needs a GPU)"
    speedup = timing.speedup_eager
    if speedup < config.pull_requests.min_speedup:
        return (
            False,
            False,
            (f"verified, but {speedup:.2f}× over eager is below min_speedup {config.pull_requests.min_speedup:.2f}×"),
        )
    return True, False, f"verified, {speedup:.2f}× over eager ({REPORTED})"


REPORTED = "as reported by the GPU job"  # publish does not time kernels: every speedup it shows is the artifact's


def _speedup(report: RunReport) -> float | None:
    timing = report.timing
    return timing.speedup_eager if timing is not None and timing.measured and timing.speedup_eager else None


def pr_title(ref: str, speedup: float | None) -> str:
    """From publish's own fields only (a validated ref and a number), never the report's strings."""
    if speedup is not None:
        return f"Kernel Foundry: {ref} {speedup:.2f}× faster than eager ({REPORTED})"
    return f"Kernel Foundry: verified Triton kernel for {ref} (timing not measured)"


def commit_message(ref: str, path: str, speedup: float | None) -> str:
    """Built from publish's own fields: no report text reaches git history, so no closing keyword,
    `Co-authored-by:` trailer or @-mention can ride along in a string of the artifact."""
    lines = [pr_title(ref, speedup), "", f"Adds {path}, a verified Triton implementation of {ref}."]
    if speedup is not None:
        lines.append(f"Speedup over eager PyTorch {REPORTED}: {speedup:.2f}×.")
    return "\n".join(lines) + "\n"


def _safe_repo_path(path: str) -> bool:
    p = PurePosixPath(path)
    return bool(path) and not p.is_absolute() and ".." not in p.parts and path.endswith(".py")


def publish_operator(
    *,
    api: GitHubApi,
    git: GitRepo,
    ref: str,
    report: RunReport,
    kernel_source: str,
    head: str,
    base_branch: str,
    config: FoundryConfig,
    remote: str = "origin",
    footer: str = "",
    source: str = "",
    dry_run: bool = False,
) -> Outcome:
    """Open or update the PR for ref (a validated repository-relative operator ref) from its report.
    source: the operator's fingerprint at head, recorded in the marker; a pull request someone closed
    for the same fingerprint is not proposed again."""
    speedup = _speedup(report)
    base = Outcome(ref=ref, action="skipped", verified=report.verified, speedup=speedup)
    publish, draft, why = decide(report, config)
    if not publish:
        return base.model_copy(update={"reason": why})
    path, _, cls = ref.partition("::")
    if not _safe_repo_path(path) or git.show(head, path) is None:
        return base.model_copy(update={"action": "failed", "reason": f"{path} is not a file of {head[:12]}"})
    if report.operator.class_name != (cls or "Model"):
        return base.model_copy(
            update={"action": "failed", "reason": f"the report is for class {report.operator.class_name}, not {ref}"}
        )
    data = kernel_source.encode()
    if not data.strip() or len(data) > KERNEL_LIMIT or "\0" in kernel_source:
        return base.model_copy(update={"action": "failed", "reason": "the kernel artifact is empty or not source"})
    if report.best is None or report.best.source.strip() not in kernel_source:
        return base.model_copy(
            update={"action": "failed", "reason": "kernel.py is not the verified candidate that report.json names"}
        )

    branch = branch_name(ref, base_branch)
    marker = marker_key(ref, base_branch)
    target = kernel_path(ref)
    base = base.model_copy(update={"branch": branch, "kernel_path": target})
    title = pr_title(ref, speedup)
    body = render_pr_body(report, pr_marker(ref, base_branch, source), footer=footer)

    existing = api.find_pull(branch, marker)
    if existing is None and api.open_pull_exists(branch) is not None:
        return base.model_copy(
            update={"action": "failed", "reason": f"an open pull request from {branch} was not made by Kernel Foundry"}
        )
    if existing is None and source:
        closed = api.closed_pulls(branch, marker)
        if closed and marked_source(closed[0].body, ref, base_branch) == source:
            why = (
                f"pull request #{closed[0].number} for this version of the operator was closed; "
                "Kernel Foundry proposes again when the operator changes (or reopen it)"
            )
            return base.model_copy(update={"reason": why, "pr_number": None})
    if git.show(head, target) == kernel_source:
        return _already_there(api, git, base, branch, existing, head, target, remote, dry_run)
    if dry_run:
        verb = f"update pull request #{existing.number}" if existing is not None else "open a pull request"
        return base.model_copy(update={"reason": f"dry run: would {verb} from {branch} ({why})"})
    old_sha = git.remote_branch(remote, branch)
    if old_sha is not None:
        git.fetch(remote, f"refs/heads/{branch}")
        foreign = git.foreign_tip(old_sha)
        if foreign is not None:
            return _hold(api, base, branch, existing, foreign)
    commit = git.commit_files(head, {target: data}, commit_message(ref, target, speedup))
    if old_sha is not None:
        if git.tree_of(old_sha) == git.tree_of(commit):
            commit = old_sha  # same kernel on the same base: keep the branch as it is
    pushed = commit != old_sha
    if pushed:
        git.push(remote, commit, branch, expect=old_sha)
    try:
        if existing is not None:
            api.update_pull(existing.number, title=title, body=body)
            pull: PullRef = existing
            action: Literal["created", "updated"] = "updated"
        else:
            pull = api.create_pull(branch=branch, base=base_branch, title=title, body=body, marker=marker, draft=draft)
            action = "created"
    except GitHubApiError as exc:
        rollback = _roll_back(api, git, remote, branch, marker, commit if pushed else None, old_sha)
        return base.model_copy(update={"action": "failed", "reason": f"{exc}; {rollback}"})
    warnings: list[str] = []
    try:
        api.add_labels(pull.number, config.labels_for(ref))
    except GitHubApiError as exc:
        warnings.append(f"labels not set: {exc}")
    if action == "created":
        if draft and not pull.draft:
            warnings.append(
                "opened ready for review, not as a draft: this repository does not support draft pull requests "
                "(timing was not measured)"
            )
        warnings += _ask_people(api, pull.number, config)
    return base.model_copy(
        update={
            "action": action,
            "reason": why,
            "pr_number": pull.number,
            "pr_url": pull.html_url,
            "warnings": tuple(warnings),
        }
    )


def _ask_people(api: GitHubApi, number: int, config: FoundryConfig) -> list[str]:
    """Assignees and review requests of a new pull request (pull_requests.assignees / reviewers). The API's
    refusals (a reviewer who is not a collaborator, an assignee who may not be assigned) become warnings for
    the summary: the pull request stands."""
    settings = config.pull_requests
    warnings: list[str] = []
    try:
        dropped = api.assign(number, settings.assignees)
        if dropped:
            warnings.append(
                f"not assigned: {', '.join(dropped)} (GitHub assigns only people with access to the repository)"
            )
    except GitHubApiError as exc:
        warnings.append(f"assignees not set: {exc}")
    users, teams = settings.review_requests()
    try:
        api.request_reviewers(number, users, teams)
    except GitHubApiError as exc:
        warnings.append(f"reviews not requested from {', '.join(settings.reviewers)}: {exc}")
    return warnings


HELD_MARKER = "<!-- kernel-foundry:held -->"


def _already_there(
    api: GitHubApi,
    git: GitRepo,
    base: Outcome,
    branch: str,
    pull: PullRef | None,
    head: str,
    target: str,
    remote: str,
    dry_run: bool,
) -> Outcome:
    """The commit proposed into holds this very kernel (a merged PR's, or one a maintainer committed): a branch
    on top of it would be a pull request that changes nothing (or, reused, GitHub's 422 "No commits between").
    Nothing is pushed; the bot's own open pull request for it has nothing left and is closed with a comment."""
    reason = f"{target} at {head[:12]} is this very kernel already: nothing to propose"
    if pull is None:
        return base.model_copy(update={"reason": reason})
    if dry_run:
        return base.model_copy(update={"reason": f"{reason}; dry run: would close #{pull.number}"})
    tip = git.remote_branch(remote, branch)
    if tip is not None:
        git.fetch(remote, f"refs/heads/{branch}")
        foreign = git.foreign_tip(tip)
        if foreign is not None:  # someone else's work on the branch: not the bot's to close
            return base.model_copy(
                update={"reason": f"{reason}; #{pull.number} left open: {branch} has a commit of someone else"}
            )
    try:
        api.upsert_comment(
            pull.number,
            REBUILT_MARKER,
            f"`{target}` at `{head[:12]}` is this very kernel already, so this pull request has nothing left. Closing.",
        )
        api.close_pull(pull.number)
    except GitHubApiError as exc:
        return base.model_copy(update={"action": "failed", "reason": f"{reason}; #{pull.number} not closed: {exc}"})
    return base.model_copy(update={"reason": f"{reason}: #{pull.number} closed", "pr_number": pull.number})


def _hold(api: GitHubApi, base: Outcome, branch: str, pull: PullRef | None, foreign: str) -> Outcome:
    """The branch carries a commit the bot did not make: leave it alone and say so on the PR."""
    reason = (
        f"branch {branch} has a commit Kernel Foundry did not make ({foreign}); "
        "it was left as it is and this kernel was not pushed"
    )
    warnings: list[str] = []
    if pull is not None:
        try:
            api.upsert_comment(
                pull.number,
                HELD_MARKER,
                f"Kernel Foundry has a new kernel for this operator but did not update `{branch}`: its latest "
                f"commit ({foreign}) was not made by the bot, and the bot never overwrites other people's work. "
                "Merge or close this pull request and delete the branch to let the bot propose again.",
            )
        except GitHubApiError as exc:
            warnings.append(f"could not comment on #{pull.number}: {exc}")
    log.warning("%s", reason)
    return base.model_copy(
        update={
            "action": "held",
            "reason": reason,
            "pr_number": pull.number if pull else None,
            "pr_url": pull.html_url if pull else "",
            "warnings": tuple(warnings),
        }
    )


def _roll_back(
    api: GitHubApi, git: GitRepo, remote: str, branch: str, marker: str, pushed: str | None, old_sha: str | None
) -> str:
    if pushed is None:
        return "the branch was not changed"
    try:
        if api.find_pull(branch, marker) is not None and old_sha is None:
            return "the pull request was created after all"
    except GitHubApiError:
        pass
    try:
        if old_sha is None:
            git.delete_branch(remote, branch, expect=pushed)
            return f"branch {branch} deleted again"
        git.push(remote, old_sha, branch, expect=pushed)
        return f"branch {branch} restored to {old_sha[:12]}"
    except GitError as exc:
        log.error("rolling back %s failed: %s", branch, exc)
        return f"rolling back branch {branch} failed too: {exc}"


REBUILT_MARKER = "<!-- kernel-foundry:rebuilt -->"


def rebuild_conflicted(
    *,
    api: GitHubApi,
    git: GitRepo,
    head: str,
    base_branch: str,
    fingerprint: Callable[[str], str | None],
    skip: frozenset[str] = frozenset(),
    remote: str = "origin",
    dry_run: bool = False,
) -> list[Outcome]:
    """The bot's open pull requests into base_branch whose branch no longer merges cleanly into head (the
    base moved): each is made again on head, with the same kernel, as long as the branch holds only the bot's
    commit and the operator is what the kernel was made for (its fingerprint in the marker). A branch with
    someone else's commit is held, never rewritten; skip: operators this run published already."""
    outcomes: list[Outcome] = []
    for pull in api.open_pulls_into(base_branch, "<!-- kernel-foundry:pull-request "):
        found = _MARKER.search(pull.body)
        if found is None or found.group(2) != base_key(base_branch):
            continue
        source, ref = found.group(3), found.group(4)
        if ref is None or not valid_operator(ref) or operator_slug(ref) != found.group(1) or ref in skip:
            continue  # an older marker without the ref: the next run that plans the operator rebuilds it
        branch = branch_name(ref, base_branch)
        if pull.head_ref != branch or pull.head_repo != api.repository:
            continue
        old_sha = git.remote_branch(remote, branch)
        if old_sha is None:
            continue
        git.fetch(remote, f"refs/heads/{branch}")
        if not git.conflicts(head, old_sha):
            continue
        target = kernel_path(ref)
        base = Outcome(
            ref=ref, action="skipped", branch=branch, kernel_path=target, pr_number=pull.number, pr_url=pull.html_url
        )
        foreign = git.foreign_tip(old_sha)
        if foreign is not None:
            held = _hold(api, base, branch, None, foreign)
            reason = f"{branch} conflicts with {base_branch}, but {held.reason}; resolve the conflict in the branch"
            outcomes.append(held.model_copy(update={"reason": reason, "pr_number": pull.number}))
            continue
        if fingerprint(ref) != source:
            why = f"{branch} conflicts with {base_branch} and the operator changed since its kernel was made"
            outcomes.append(base.model_copy(update={"reason": f"{why}; the next run that plans it makes a new one"}))
            continue
        kernel = git.show(old_sha, target)
        if kernel is None:
            outcomes.append(base.model_copy(update={"reason": f"{target} is not on {branch}: not rebuilt"}))
            continue
        if dry_run:
            outcomes.append(base.model_copy(update={"reason": f"dry run: would rebuild {branch} on {head[:12]}"}))
            continue
        message = git.run("log", "-1", "--format=%B", old_sha)  # the bot's own message, from its own fields
        commit = git.commit_files(head, {target: kernel.encode()}, message)
        if git.tree_of(commit) == git.tree_of(head):
            note = f"`{base_branch}` has this kernel already (`{head[:12]}`), so this pull request has nothing left."
            api.upsert_comment(pull.number, REBUILT_MARKER, f"{note} Closing.")
            api.close_pull(pull.number)
            outcomes.append(base.model_copy(update={"reason": f"{base_branch} has the kernel already: closed"}))
            continue
        git.push(remote, commit, branch, expect=old_sha)
        api.upsert_comment(
            pull.number,
            REBUILT_MARKER,
            f"`{branch}` conflicted with `{base_branch}`, so Kernel Foundry made it again on `{head[:12]}` "
            "with the same kernel (the branch held only the bot's commit).",
        )
        outcomes.append(
            base.model_copy(
                update={"action": "rebuilt", "reason": f"conflicted with {base_branch}: rebuilt on {head[:12]}"}
            )
        )
    return outcomes
