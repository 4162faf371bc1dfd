"""The GitHub REST API through PyGithub — the only module that imports it.

Everything returns small records, not PyGithub objects. Every call goes through one retry loop:
5xx answers, timeouts and dropped connections back off exponentially; primary rate limits wait
for `x-ratelimit-reset`, secondary ones for `retry-after` (or a minute). A call that creates
something (a comment, a pull request) first looks for what it would create before trying again,
so a request that reached GitHub but whose answer was lost never makes a duplicate.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import github
import requests
from github import Auth, Github, GithubException
from pydantic import BaseModel, ConfigDict

from foundry.core.errors import FatalError

log = logging.getLogger(__name__)

T = TypeVar("T")
DEFAULT_API_URL = "https://api.github.com"
DEFAULT_BOT_LOGIN = "github-actions[bot]"  # who GITHUB_TOKEN writes as; FOUNDRY_BOT_LOGIN for an app's token
REACTIONS = ("eyes", "rocket", "confused", "+1", "-1", "laugh", "hooray", "heart")


class GitHubApiError(FatalError):
    """A GitHub API call failed for good (after retries, or for a reason retrying cannot fix)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class RetryPolicy:
    attempts: int = 6
    base_delay_s: float = 1.0
    max_delay_s: float = 60.0
    max_wait_s: float = 900.0  # longest rate-limit wait worth sitting out in a CI job
    secondary_default_s: float = 60.0  # GitHub: wait at least a minute when no retry-after is given
    sleep: Callable[[float], None] = field(default=time.sleep)
    clock: Callable[[], float] = field(default=time.time)

    def delay(self, exc: BaseException, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None when retrying cannot help."""
        backoff = min(self.max_delay_s, self.base_delay_s * 2**attempt)
        if isinstance(exc, requests.exceptions.Timeout | requests.exceptions.ConnectionError):
            return backoff
        if not isinstance(exc, GithubException):
            return None
        status = exc.status
        headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
        if status >= 500:
            return backoff
        if status in (403, 429):
            if "retry-after" in headers:
                try:
                    return max(0.0, float(headers["retry-after"]))
                except ValueError:
                    return self.secondary_default_s
            if headers.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in headers:
                try:
                    return max(1.0, float(headers["x-ratelimit-reset"]) - self.clock() + 1.0)
                except ValueError:
                    return self.secondary_default_s
            message = str((exc.data or {}).get("message", "")) if isinstance(exc.data, dict) else ""
            if "rate limit" in message.lower():
                return self.secondary_default_s
        return None


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CommentRef(_Record):
    id: int
    url: str
    html_url: str
    body: str
    author: str = ""


class PullRef(_Record):
    number: int
    url: str
    html_url: str
    title: str
    body: str
    head_ref: str
    head_sha: str
    head_repo: str | None  # owner/name; None when the fork was deleted
    base_ref: str
    base_sha: str = ""
    state: str = "open"
    draft: bool = False


def _comment(c: github.IssueComment.IssueComment) -> CommentRef:
    return CommentRef(id=c.id, url=c.url, html_url=c.html_url or "", body=c.body or "", author=c.user.login)


def _pull(p: github.PullRequest.PullRequest) -> PullRef:
    return PullRef(
        number=p.number,
        url=p.url,
        html_url=p.html_url or "",
        title=p.title or "",
        body=p.body or "",
        head_ref=p.head.ref,
        head_sha=p.head.sha,
        head_repo=p.head.repo.full_name if p.head.repo is not None else None,
        base_ref=p.base.ref,
        base_sha=p.base.sha,
        state=p.state,
        draft=bool(p.draft),
    )


class GitHubApi:
    """One repository's API, as the bot uses it."""

    def __init__(
        self,
        repository: str,
        token: str | None,
        *,
        base_url: str = DEFAULT_API_URL,
        timeout_s: int = 15,
        retry: RetryPolicy | None = None,
        throttle: bool = True,
        bot_login: str = DEFAULT_BOT_LOGIN,
    ) -> None:
        self.repository = repository
        self.bot_login = bot_login  # the account the token writes as: markers count only in its comments
        self.retry = retry or RetryPolicy()
        kwargs = {} if throttle else {"seconds_between_requests": None, "seconds_between_writes": None}
        self._gh = Github(
            auth=Auth.Token(token) if token else None,
            base_url=base_url.rstrip("/"),
            timeout=timeout_s,
            retry=None,  # our own loop retries, with look-ups before re-creating anything
            user_agent="kernel-foundry",
            lazy=True,  # objects are fetched when read, so building URLs costs no request
            **kwargs,
        )
        self._repo = self._gh.get_repo(repository)
        self.owner = repository.split("/")[0]

    # the retry loop ------------------------------------------------------------------------------
    def call(self, what: str, fn: Callable[[], T], *, reconcile: Callable[[], T | None] | None = None) -> T:
        last: BaseException | None = None
        for attempt in range(self.retry.attempts):
            try:
                return fn()
            except (GithubException, requests.exceptions.RequestException) as exc:
                last = exc
                delay = self.retry.delay(exc, attempt)
                if delay is None:
                    raise GitHubApiError(f"{what}: {_describe(exc)}", getattr(exc, "status", None)) from exc
                if delay > self.retry.max_wait_s:
                    raise GitHubApiError(
                        f"{what}: rate limited for {delay:.0f} s more than this job may wait", 429
                    ) from exc
                if attempt + 1 == self.retry.attempts:
                    break
                log.warning("%s: %s; retrying in %.1f s", what, _describe(exc), delay)
                self.retry.sleep(delay)
                if reconcile is not None:
                    found = reconcile()
                    if found is not None:
                        log.info("%s: it had gone through; not repeating it", what)
                        return found
        assert last is not None
        raise GitHubApiError(
            f"{what}: gave up after {self.retry.attempts} attempts: {_describe(last)}",
            getattr(last, "status", None),
        ) from last

    def _lookup(self, what: str, fn: Callable[[], T]) -> T:
        """A read used for reconciling: retried the same way, no reconcile of its own."""
        return self.call(what, fn)

    # permissions and reactions -------------------------------------------------------------------
    def permission(self, login: str) -> str:
        """admin | maintain | write | triage | read | none (not a collaborator)."""

        def fetch() -> str:
            try:  # role_name tells maintain and triage apart from the legacy write and read
                return self._repo.get_collaborator_role_name(login) or "none"
            except github.UnknownObjectException:
                return "none"

        return self.call(f"permission of {login}", fetch)

    def react(self, comment_id: int, content: str) -> None:
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content}")
        # GitHub answers 200 with the existing reaction when it is already there: safe to repeat
        self.call(
            f"reaction {content} on comment {comment_id}",
            lambda: self._issue_comment(comment_id).create_reaction(content),
        )

    # comments ------------------------------------------------------------------------------------
    def find_comment(self, issue: int, marker: str) -> CommentRef | None:
        """The bot's own comment carrying marker (anyone can paste a marker into a comment)."""

        def scan() -> CommentRef | None:
            for c in self._repo.get_issue(issue).get_comments():
                if c.user.login == self.bot_login and marker in (c.body or ""):
                    return _comment(c)
            return None

        return self._lookup(f"comments of #{issue}", scan)

    def upsert_comment(self, issue: int, marker: str, body: str) -> CommentRef:
        """The comment carrying marker, edited in place; created when there is none."""
        if marker not in body:
            body = f"{marker}\n{body}"
        existing = self.find_comment(issue, marker)
        if existing is not None:
            if existing.body != body:
                self.call(f"edit comment {existing.id}", lambda: self._issue_comment(existing.id).edit(body))
            return existing.model_copy(update={"body": body})
        made = self.call(
            f"comment on #{issue}",
            lambda: _comment(self._repo.get_issue(issue).create_comment(body)),
            reconcile=lambda: self.find_comment(issue, marker),
        )
        if made.author and made.author != self.bot_login:
            log.warning("the token writes as %s, not %s (set FOUNDRY_BOT_LOGIN)", made.author, self.bot_login)
            self.bot_login = made.author
        return made

    def edit_comment(self, issue: int, marker: str, body: str, *, only_if: str) -> bool:
        """Edit the bot's comment carrying marker, only while it still says only_if (a run's progress never
        overwrites what came after it, such as "stopped"); never creates one. True when the comment says body."""
        if marker not in body:
            body = f"{marker}\n{body}"
        existing = self.find_comment(issue, marker)
        if existing is None or only_if not in existing.body:
            return False
        if existing.body != body:
            self.call(f"edit comment {existing.id}", lambda: self._issue_comment(existing.id).edit(body))
        return True

    def bot_comments(self, issue: int) -> list[CommentRef]:
        """The bot's own comments on an issue or pull request, oldest first."""
        return self._lookup(
            f"comments of #{issue}",
            lambda: [_comment(c) for c in self._repo.get_issue(issue).get_comments() if c.user.login == self.bot_login],
        )

    def comment(self, comment_id: int) -> CommentRef:
        return self.call(f"comment {comment_id}", lambda: _comment(self._repo.get_issue(0).get_comment(comment_id)))

    def cancel_run(self, run_id: int) -> bool:
        """Ask GitHub to cancel a workflow run; False when it had already finished (409)."""
        run = self._repo.get_workflow_run(run_id)
        return self.call(f"cancel workflow run {run_id}", run.cancel)

    def _issue_comment(self, comment_id: int) -> github.IssueComment.IssueComment:
        # get_issue and get_comment only build URLs (…/issues/comments/{id}); no request is made
        return self._repo.get_issue(0).get_comment(comment_id)

    # pull requests -------------------------------------------------------------------------------
    def pull(self, number: int) -> PullRef:
        return self.call(f"pull request #{number}", lambda: _pull(self._repo.get_pull(number)))

    def find_pull(self, branch: str, marker: str) -> PullRef | None:
        """The open pull request from branch (of this repository) whose body carries marker."""

        def scan() -> PullRef | None:
            for p in self._repo.get_pulls(state="open", head=f"{self.owner}:{branch}"):
                if p.head.ref == branch and marker in (p.body or ""):
                    return _pull(p)
            return None

        return self._lookup(f"open pull requests from {branch}", scan)

    def closed_pulls(self, branch: str, marker: str) -> list[PullRef]:
        """Closed (or merged) pull requests from branch whose body carries marker, newest first."""

        def scan() -> list[PullRef]:
            found = [
                _pull(p)
                for p in self._repo.get_pulls(state="closed", head=f"{self.owner}:{branch}")
                if p.head.ref == branch and marker in (p.body or "")
            ]
            return sorted(found, key=lambda p: p.number, reverse=True)

        return self._lookup(f"closed pull requests from {branch}", scan)

    def open_pull_exists(self, branch: str) -> PullRef | None:
        def scan() -> PullRef | None:
            for p in self._repo.get_pulls(state="open", head=f"{self.owner}:{branch}"):
                if p.head.ref == branch:
                    return _pull(p)
            return None

        return self._lookup(f"open pull requests from {branch}", scan)

    def create_pull(self, *, branch: str, base: str, title: str, body: str, marker: str, draft: bool) -> PullRef:
        """Open the pull request. A repository whose plan has no drafts answers 422 "Draft pull requests are
        not supported"; the pull request is then opened ready for review (the returned draft says which)."""

        def create() -> PullRef:
            as_draft = draft
            try:
                try:
                    made = self._repo.create_pull(base=base, head=branch, title=title, body=body, draft=as_draft)
                except GithubException as exc:
                    if not (as_draft and exc.status == 422 and DRAFTS_UNSUPPORTED in str(exc.data).lower()):
                        raise
                    log.warning("drafts are not supported in %s: opening a ready pull request", self.repository)
                    made = self._repo.create_pull(base=base, head=branch, title=title, body=body, draft=False)
                return _pull(made)
            except GithubException as exc:
                if exc.status == 422 and "already exists" in str(exc.data).lower():
                    found = self.find_pull(branch, marker)
                    if found is not None:
                        return found
                raise

        return self.call(f"create pull request from {branch}", create, reconcile=lambda: self.find_pull(branch, marker))

    def open_pulls_into(self, base: str, marker: str) -> list[PullRef]:
        """Every open pull request into base whose body carries marker, through all pages of the list."""

        def scan() -> list[PullRef]:
            return [_pull(p) for p in self._repo.get_pulls(state="open", base=base) if marker in (p.body or "")]

        return self._lookup(f"open pull requests into {base}", scan)

    def request_reviewers(self, number: int, reviewers: tuple[str, ...], teams: tuple[str, ...]) -> None:
        """Ask for reviews (users, and team slugs of the repository's organization)."""
        if not reviewers and not teams:
            return
        self.call(
            f"review requests on #{number}",
            lambda: self._repo.get_pull(number).create_review_request(
                reviewers=list(reviewers), team_reviewers=list(teams)
            ),
        )

    def assign(self, number: int, logins: tuple[str, ...]) -> tuple[str, ...]:
        """Assign logins; returns those GitHub did not assign (it drops people who may not be assigned
        without an error, so the answer is compared with what was asked)."""
        if not logins:
            return ()

        def add() -> tuple[str, ...]:
            issue = self._repo.get_issue(number)
            issue.add_to_assignees(*logins)
            assigned = {a.login.lower() for a in issue.assignees}
            return tuple(login for login in logins if login.lower() not in assigned)

        return self.call(f"assignees on #{number}", add)

    def update_pull(self, number: int, *, title: str, body: str) -> None:
        self.call(f"update pull request #{number}", lambda: self._repo.get_pull(number).edit(title=title, body=body))

    def close_pull(self, number: int) -> None:
        self.call(f"close pull request #{number}", lambda: self._repo.get_pull(number).edit(state="closed"))

    # refs the bot keeps -------------------------------------------------------------------------
    def ref_sha(self, ref: str) -> str | None:
        """The commit a ref (`foundry/done/main`, without `refs/`) points at; None when there is none."""

        def fetch() -> str | None:
            try:
                return self._repo.get_git_ref(ref).object.sha
            except github.UnknownObjectException:
                return None

        return self.call(f"ref {ref}", fetch)

    def set_ref(self, ref: str, sha: str) -> None:
        """Point refs/<ref> at sha, creating it when there is none (the caller decides it only moves forward)."""

        def write() -> None:
            try:
                found = self._repo.get_git_ref(ref)
                found.object  # noqa: B018 (reads it: a missing ref raises here, not at the edit)
            except github.UnknownObjectException:
                self._repo.create_git_ref(f"refs/{ref}", sha)
                return
            found.edit(sha, force=True)

        self.call(f"set ref {ref}", write)

    def add_labels(self, number: int, labels: tuple[str, ...]) -> None:
        if labels:
            self.call(f"labels on #{number}", lambda: self._repo.get_issue(number).add_to_labels(*labels))


HINTS = {
    "resource not accessible by integration": (
        "the token lacks a permission: give the job `contents: write` and `pull-requests: write`"
    ),
    "not permitted to create or approve pull requests": (
        'turn on "Allow GitHub Actions to create and approve pull requests" (Settings → Actions → General), '
        "or pass a GitHub App token as github-token"
    ),
    "no commits between": "the branch adds nothing to its base (the kernel is there already)",
}


DRAFTS_UNSUPPORTED = "draft pull requests are not supported"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, GithubException):
        message = exc.data.get("message") if isinstance(exc.data, dict) else exc.data
        errors = exc.data.get("errors") if isinstance(exc.data, dict) else None
        if isinstance(errors, list):  # a 422 "Validation Failed" says why in errors[].message
            details = [str(e.get("message") or e.get("code") or "") for e in errors if isinstance(e, dict)]
            details = [d for d in details if d]
            if details:
                message = f"{message}: {'; '.join(details)}"
        hint = next((h for k, h in HINTS.items() if k in str(message).lower()), "")
        return f"HTTP {exc.status}: {message or exc}" + (f" ({hint})" if hint else "")
    return f"{type(exc).__name__}: {exc}"
