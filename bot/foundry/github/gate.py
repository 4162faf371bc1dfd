"""Decide what an event asks for and whether the bot may do it — before any repository code runs.

The gate reads the payload, the config and (for comments) the commenter's permission through the
collaborator-permission API. It never imports repository code. Fork pull requests are refused:
their code never reaches the GPU runner.
"""

from __future__ import annotations

import logging
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from foundry.github.api import GitHubApi
from foundry.github.config import FoundryConfig
from foundry.github.events import (
    ALLOWED_PERMISSIONS,
    CommandError,
    DispatchEvent,
    Event,
    IssueCommentEvent,
    OptimizeCommand,
    PushEvent,
    ScheduleEvent,
    help_text,
    parse_command,
    valid_operator,
)

log = logging.getLogger(__name__)

BOT_BRANCH_PREFIX = "foundry/"


class Target(BaseModel):
    """What to optimize, where the kernel PR goes, and where to report."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["push", "comment", "dispatch", "schedule"]
    repository: str
    head: str  # the commit (or branch) whose operators are optimized
    base_branch: str  # the branch kernel PRs are opened against
    compare_base: str | None = None  # detection compares head with this; None: no base
    operator: str | None = None  # named operator; None: detect
    budget: int | None = None
    issue_number: int | None = None  # where the status comment goes
    comment_id: int | None = None  # the triggering comment (reactions)
    actor: str = ""
    default_branch: str = ""  # a new branch is compared with its merge-base with this one


class GateResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run: bool
    reason: str  # for logs and the job summary
    reply: str | None = None  # a comment to post when refusing (help, permission)
    config_error: bool = False  # the refusal is an invalid .github/foundry.yml (answered with 😕)
    stop: bool = False  # `/foundry stop` by someone with write access: cancel this thread's runs
    target: Target | None = None


def _skip(reason: str, reply: str | None = None) -> GateResult:
    return GateResult(run=False, reason=reason, reply=reply)


def gate(event: Event, *, config: FoundryConfig, api: GitHubApi | None, head_sha: str) -> GateResult:
    """head_sha: $GITHUB_SHA (for comments: the default branch's commit the workflow runs on)."""
    repo = event.repository.full_name
    if isinstance(event, PushEvent):
        branch = event.branch
        if branch is None:
            return _skip(f"push to {event.ref} is not a branch push")
        if event.deleted:
            return _skip(f"branch {branch} was deleted")
        if branch.startswith(BOT_BRANCH_PREFIX):
            return _skip(f"push to the bot's own branch {branch}")
        return GateResult(
            run=True,
            reason=f"push to {branch}",
            target=Target(
                kind="push",
                repository=repo,
                head=event.after,
                base_branch=branch,
                compare_base=None if set(event.before) == {"0"} else event.before,
                actor=event.sender.login if event.sender else "",
                default_branch=event.repository.default_branch,
            ),
        )
    if isinstance(event, ScheduleEvent):
        # the nightly sweep: the default branch since the last commit the bot finished there (the action
        # reads refs/foundry/done/<branch>; without one, every operator), and its conflicted pull requests
        branch = event.repository.default_branch
        return GateResult(
            run=True,
            reason=f"schedule ({event.schedule or 'cron'}) on {branch}",
            target=Target(
                kind="schedule",
                repository=repo,
                head=head_sha,
                base_branch=branch,
                default_branch=branch,
            ),
        )
    if isinstance(event, DispatchEvent):
        inputs = event.inputs or {}
        operator = str(inputs.get("operator") or "").strip() or None
        if operator is not None and not valid_operator(operator):
            return _skip(f"input operator {operator!r} is not path/to/file.py or path/to/file.py::ClassName")
        budget_text = str(inputs.get("budget") or "").strip()
        if budget_text and (not budget_text.isdigit() or not 1 <= int(budget_text) <= config.max_budget):
            return _skip(f"input budget {budget_text!r} is not a whole number from 1 to {config.max_budget}")
        branch = event.ref.removeprefix("refs/heads/")
        return GateResult(
            run=True,
            reason=f"workflow_dispatch on {branch}",
            target=Target(
                kind="dispatch",
                repository=repo,
                head=head_sha,
                base_branch=branch,
                compare_base=f"{head_sha}^1" if operator is None else None,
                operator=operator,
                budget=int(budget_text) if budget_text else None,
                actor=event.sender.login if event.sender else "",
            ),
        )
    assert isinstance(event, IssueCommentEvent)
    return _gate_comment(event, config=config, api=api, head_sha=head_sha)


def _gate_comment(
    event: IssueCommentEvent, *, config: FoundryConfig, api: GitHubApi | None, head_sha: str
) -> GateResult:
    if event.action != "created":
        return _skip(f"comment {event.action}, not created")
    author = event.comment.user
    if author.is_bot:
        return _skip(f"comment by the bot account {author.login}")
    if event.issue.state != "open":
        return _skip(f"#{event.issue.number} is {event.issue.state}")
    problem: CommandError | None = None
    try:
        command = parse_command(event.comment.body, max_budget=config.max_budget)
    except CommandError as exc:
        command, problem = None, exc
    if command is None and problem is None:
        return _skip("comment is not a /foundry command")
    if api is None:
        return _skip("no GitHub token: cannot check the commenter's permission")
    permission = api.permission(author.login)  # before any answer: no replies to people without write access
    if permission not in ALLOWED_PERMISSIONS:
        if problem is not None:
            return _skip(f"bad command by {author.login}, who has {permission} permission")
        return _skip(
            f"{author.login} has {permission} permission",
            reply=(
                f"@{author.login} thanks for the interest! `/foundry` runs on this repository's GPU runner, "
                "so it is reserved for collaborators with write access. A maintainer can run it for you."
            ),
        )
    if problem is not None:
        why = str(problem)
        lead = f"@{author.login} {why}." if why else f"@{author.login} here is how to use Kernel Foundry."
        return _skip(f"bad command: {why or 'help'}", reply=f"{lead}\n\n{help_text(config.max_budget)}")
    assert command is not None
    repo = event.repository.full_name
    number = event.issue.number
    if command.verb == "stop":
        return GateResult(run=False, reason=f"/foundry stop by {author.login} on #{number}", stop=True)
    if command.verb == "retry":
        previous = _last_request(api, number, config.max_budget)
        if previous is None:
            return _skip(
                "nothing to retry",
                reply=f"@{author.login} there is nothing to retry: no `/foundry optimize` on this thread was run.",
            )
        command = previous
    if event.issue.is_pull_request:
        pull = api.pull(number)
        if pull.state != "open":
            return _skip(f"pull request #{number} is {pull.state}")
        if pull.head_repo != repo:
            return _skip(
                f"pull request #{number} comes from a fork",
                reply=(
                    f"@{author.login} pull request #{number} comes from a fork, and code from forks never runs "
                    "on the GPU runner. Push the operator to a branch of this repository and ask again there."
                ),
            )
        target = Target(
            kind="comment",
            repository=repo,
            head=pull.head_sha,
            base_branch=pull.head_ref,
            compare_base=pull.base_sha or None,
            operator=command.operator,
            budget=command.budget,
            issue_number=number,
            comment_id=event.comment.id,
            actor=author.login,
        )
    else:
        if command.operator is None:
            return _skip(
                "no operator named on an issue",
                reply=f"@{author.login} on an issue, name the operator: "
                "`/foundry optimize path/to/file.py[::ClassName]`.",
            )
        target = Target(
            kind="comment",
            repository=repo,
            head=head_sha,
            base_branch=event.repository.default_branch,
            operator=command.operator,
            budget=command.budget,
            issue_number=number,
            comment_id=event.comment.id,
            actor=author.login,
        )
    return GateResult(run=True, reason=f"/foundry optimize by {author.login} on #{number}", target=target)


STATUS = re.compile(r"<!-- kernel-foundry:status comment=(\d+) -->")


def _last_request(api: GitHubApi, issue: int, max_budget: int) -> OptimizeCommand | None:
    """The thread's last `/foundry optimize` that the bot ran: the comment its newest status comment names."""
    ids = [int(m.group(1)) for c in api.bot_comments(issue) for m in [STATUS.search(c.body)] if m]
    for comment_id in sorted(ids, reverse=True):
        try:
            command = parse_command(api.comment(comment_id).body, max_budget=max_budget)
        except CommandError:
            continue
        if command is not None and command.verb == "optimize":
            return command
    return None
