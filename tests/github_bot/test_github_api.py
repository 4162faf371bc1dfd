"""The API layer against a real HTTP server: retries, rate limits, timeouts, no duplicates."""

from __future__ import annotations

import time

import pytest
from foundry.github.api import GitHubApi, GitHubApiError, RetryPolicy


def test_permission_roles(api: GitHubApi, fake) -> None:
    fake.permissions.update({"alice": "admin", "bob": "maintain", "carol": "triage"})
    assert api.permission("alice") == "admin"
    assert api.permission("bob") == "maintain"  # role_name, not the legacy "write"
    assert api.permission("carol") == "triage"
    assert api.permission("stranger") == "read"
    assert all(c.path.endswith("/permission") for c in fake.calls)


def test_comment_upsert_edits_in_place(api: GitHubApi, fake) -> None:
    issue = fake.open_issue()
    for i in range(40):  # more than a page of comments: the marker is found on page 2
        fake.add_comment(issue, f"chatter {i}", "someone")
    first = api.upsert_comment(issue, "<!-- m -->", "first")
    second = api.upsert_comment(issue, "<!-- m -->", "second")
    assert first.id == second.id
    assert fake.comments[first.id]["body"] == "<!-- m -->\nsecond"
    assert sum("<!-- m -->" in c["body"] for c in fake.comments.values()) == 1
    assert any("page" in c.query for c in fake.calls), "pagination was not followed"


def test_reaction_is_idempotent(api: GitHubApi, fake) -> None:
    issue = fake.open_issue()
    comment = fake.add_comment(issue, "/foundry optimize a.py", "alice")
    api.react(comment["id"], "eyes")
    api.react(comment["id"], "eyes")
    assert [r["content"] for r in fake.reactions] == ["eyes"]
    with pytest.raises(ValueError):
        api.react(comment["id"], "thumbs")


def test_5xx_retried_with_backoff(api: GitHubApi, fake, sleeps) -> None:
    fake.inject("GET", r"/permission$", status=502, times=2)
    assert api.permission("alice") == "read"
    assert sleeps.waits == [1.0, 2.0]
    assert [c.status for c in fake.calls] == [502, 502, 200]


def test_secondary_rate_limit_honours_retry_after(api: GitHubApi, fake, sleeps) -> None:
    issue = fake.open_issue()
    fake.inject(
        "POST",
        r"/issues/\d+/comments$",
        status=403,
        headers={"Retry-After": "7"},
        message="You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    )
    made = api.upsert_comment(issue, "<!-- s -->", "hello")
    assert 7.0 in sleeps.waits
    assert [c["id"] for c in fake.comments.values() if "<!-- s -->" in c["body"]] == [made.id]


def test_secondary_rate_limit_without_header_waits_a_minute(api: GitHubApi, fake, sleeps) -> None:
    fake.inject("GET", r"/permission$", status=403, message="You have exceeded a secondary rate limit.")
    api.permission("alice")
    assert sleeps.waits == [60.0]


def test_primary_rate_limit_waits_for_reset(fake, sleeps) -> None:
    now = 1_900_000_000.0
    api = GitHubApi(
        "acme/models",
        "test-token-not-secret",
        base_url=fake.api_url,
        timeout_s=1,
        retry=RetryPolicy(sleep=sleeps, clock=lambda: now),
        throttle=False,
    )
    fake.inject(
        "GET",
        r"/permission$",
        status=403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 30)},
        message="API rate limit exceeded",
    )
    api.permission("alice")
    assert sleeps.waits == [31.0]


def test_rate_limit_longer_than_the_job_may_wait_fails_clearly(api: GitHubApi, fake) -> None:
    fake.inject("GET", r"/permission$", status=429, headers={"Retry-After": "3600"})
    with pytest.raises(GitHubApiError, match="rate limited"):
        api.permission("alice")


def impatient(fake, sleeps) -> GitHubApi:
    """A client that gives up on an answer after 1 s (the fake answers these tests' writes after 1.5 s)."""
    return GitHubApi(
        "acme/models",
        "test-token-not-secret",
        base_url=fake.api_url,
        timeout_s=1,
        retry=RetryPolicy(sleep=sleeps),
        throttle=False,
        bot_login="kernel-foundry[bot]",
    )


def test_timeout_after_the_write_went_through_makes_no_duplicate_comment(fake, sleeps) -> None:
    api = impatient(fake, sleeps)
    issue = fake.open_issue()
    fake.inject("POST", r"/issues/\d+/comments$", status=201, delay_s=1.5, process=True)
    start = time.monotonic()
    made = api.upsert_comment(issue, "<!-- t -->", "status")
    assert time.monotonic() - start < 10
    bodies = [c["body"] for c in fake.comments.values()]
    assert bodies.count("<!-- t -->\nstatus") == 1
    assert made.body.endswith("status")
    assert sum(1 for c in fake.calls if c.method == "POST") == 1, "the POST was repeated"


def test_timeout_after_pull_request_created_makes_no_duplicate(fake, sleeps, remote) -> None:
    api = impatient(fake, sleeps)
    bare, dev = remote
    dev.commit({"a.py": "x = 1\n"})
    dev.push("main")
    dev.commit({"a_foundry.py": "y = 2\n"})
    dev.push("foundry/a")
    fake.inject("POST", r"/pulls$", status=201, delay_s=1.5, process=True)
    pull = api.create_pull(
        branch="foundry/a", base="main", title="t", body="<!-- p -->\nbody", marker="<!-- p -->", draft=False
    )
    assert len(fake.pulls) == 1
    assert pull.number == next(iter(fake.pulls))
    assert pull.head_sha == dev.head()


def test_not_found_is_not_retried(api: GitHubApi, fake, sleeps) -> None:
    with pytest.raises(GitHubApiError, match="404"):
        api.pull(999)
    assert sleeps.waits == []


def test_gives_up_after_attempts(fake, sleeps) -> None:
    api = GitHubApi(
        "acme/models",
        "test-token-not-secret",
        base_url=fake.api_url,
        timeout_s=1,
        retry=RetryPolicy(attempts=3, sleep=sleeps),
        throttle=False,
    )
    fake.inject("GET", r"/permission$", status=500, times=10)
    with pytest.raises(GitHubApiError, match="gave up after 3 attempts"):
        api.permission("alice")
    assert len(fake.calls) == 3
