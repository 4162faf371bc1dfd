from __future__ import annotations

import json
from pathlib import Path

import pytest
from foundry.github.events import (
    CommandError,
    EventError,
    IssueCommentEvent,
    PushEvent,
    load_event,
    parse_command,
    parse_event,
)

SHA_A, SHA_B = "a" * 40, "b" * 40
REPO = {"full_name": "acme/models", "default_branch": "main", "owner": {"login": "acme"}, "url": "https://x/y"}


def test_command_parsing() -> None:
    assert parse_command("/foundry optimize ops/a.py --budget 8\nthanks!", max_budget=64).model_dump() == {
        "verb": "optimize",
        "operator": "ops/a.py",
        "budget": 8,
    }
    assert parse_command("/foundry optimize", max_budget=64).operator is None
    assert parse_command("/foundry optimize ops/a.py::Block --budget=3", max_budget=64).budget == 3
    assert parse_command("please /foundry optimize", max_budget=64) is None
    assert parse_command("/foundryoptimize", max_budget=64) is None
    assert parse_command("", max_budget=64) is None
    assert parse_command("/foundry stop", max_budget=64).verb == "stop"
    assert parse_command("/foundry retry\nplease", max_budget=64).verb == "retry"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("/foundry deploy", "unknown command `deploy`"),
        ("/foundry optimize --budget 0", "from 1 to 64"),
        ("/foundry optimize --budget 65", "from 1 to 64"),
        ("/foundry optimize --budget lots", "from 1 to 64"),
        ("/foundry optimize a.py b.py", "one operator"),
        ("/foundry optimize ../../etc/passwd.py", "is not an operator"),
        ("/foundry optimize /abs/a.py", "is not an operator"),
        ("/foundry optimize ops/a.py;touch${IFS}pwned", "is not an operator"),
        ("/foundry optimize $(touch pwned).py", "is not an operator"),
        ("/foundry optimize `id`.py", "is not an operator"),
        ("/foundry optimize --exec=x", "unknown option"),
        ("/foundry optimize 'unclosed", "could not read"),
        ("/foundry help", ""),
        ("/foundry stop now", "`stop` takes no arguments"),
        ("/foundry retry ops/a.py", "`retry` takes no arguments"),
    ],
)
def test_bad_commands(body: str, message: str) -> None:
    with pytest.raises(CommandError) as err:
        parse_command(body, max_budget=64)
    assert message in str(err.value)


def test_payloads_parse_and_ignore_unknown_fields() -> None:
    push = parse_event(
        "push",
        {"ref": "refs/heads/main", "before": SHA_A, "after": SHA_B, "repository": REPO, "pusher": {"name": "x"}},
    )
    assert isinstance(push, PushEvent) and push.branch == "main"
    comment = parse_event(
        "issue_comment",
        {
            "action": "created",
            "issue": {"number": 3, "pull_request": {"url": "https://x"}},
            "comment": {"id": 9, "body": "/foundry optimize", "user": {"login": "dependabot[bot]", "type": "Bot"}},
            "repository": REPO,
            "sender": {"login": "dependabot[bot]", "type": "Bot"},
        },
    )
    assert isinstance(comment, IssueCommentEvent)
    assert comment.issue.is_pull_request and comment.comment.user.is_bot


@pytest.mark.parametrize(
    ("name", "data", "field"),
    [
        ("push", {"ref": "refs/heads/main", "before": SHA_A, "repository": REPO}, "after"),
        ("push", {"ref": "refs/heads/main", "before": "nope", "after": SHA_B, "repository": REPO}, "before"),
        ("issue_comment", {"action": "created", "issue": {"number": 1}, "repository": REPO}, "comment"),
        (
            "issue_comment",
            {"action": "created", "issue": {"number": "x"}, "comment": {}, "repository": REPO},
            "issue.number",
        ),
        ("workflow_dispatch", {"ref": "refs/heads/main"}, "repository"),
    ],
)
def test_malformed_payloads_name_the_field(name: str, data: dict, field: str) -> None:
    with pytest.raises(EventError) as err:
        parse_event(name, data)
    assert f"field `{field}" in str(err.value)


def test_load_event_errors(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text("{not json")
    with pytest.raises(EventError, match="not JSON"):
        load_event("push", path)
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(EventError, match="must be a JSON object"):
        load_event("push", path)
    with pytest.raises(EventError, match="not an event Kernel Foundry handles"):
        load_event("pull_request_target", path)
    with pytest.raises(EventError, match="cannot read"):
        load_event("push", tmp_path / "missing.json")
