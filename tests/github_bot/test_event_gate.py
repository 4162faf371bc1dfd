"""The gate: what each event asks for and whether the bot may do it."""

from __future__ import annotations

from foundry.github.config import parse_config
from foundry.github.events import parse_event
from foundry.github.gate import gate

A, B = "a" * 40, "b" * 40
REPO = {"full_name": "acme/models", "default_branch": "main"}
CONFIG = parse_config("max_budget: 16")


def push(**extra: object):
    data = {"ref": "refs/heads/main", "before": A, "after": B, "repository": REPO, **extra}
    return parse_event("push", data)


def comment(body: str, login: str = "alice", number: int = 1, pull: bool = False):
    issue: dict = {"number": number}
    if pull:
        issue["pull_request"] = {"url": "x"}
    return parse_event(
        "issue_comment",
        {
            "action": "created",
            "issue": issue,
            "comment": {"id": 5, "body": body, "user": {"login": login}},
            "repository": REPO,
            "sender": {"login": login},
        },
    )


def test_pushes() -> None:
    result = gate(push(), config=CONFIG, api=None, head_sha=B)
    assert result.run and result.target.compare_base == A and result.target.base_branch == "main"
    assert gate(push(before="0" * 40, created=True), config=CONFIG, api=None, head_sha=B).target.compare_base is None
    assert not gate(push(ref="refs/tags/v1"), config=CONFIG, api=None, head_sha=B).run
    assert not gate(push(deleted=True), config=CONFIG, api=None, head_sha=B).run
    own = gate(push(ref="refs/heads/foundry/ops-a"), config=CONFIG, api=None, head_sha=B)
    assert not own.run and "bot's own branch" in own.reason


def test_dispatch_inputs() -> None:
    def dispatch(inputs: dict):
        event = parse_event("workflow_dispatch", {"ref": "refs/heads/dev", "inputs": inputs, "repository": REPO})
        return gate(event, config=CONFIG, api=None, head_sha=B)

    ok = dispatch({"operator": "ops/a.py::Norm", "budget": "8"})
    assert ok.run and (ok.target.operator, ok.target.budget, ok.target.base_branch) == ("ops/a.py::Norm", 8, "dev")
    assert dispatch({}).target.compare_base == f"{B}^1"
    assert not dispatch({"budget": "17"}).run
    assert not dispatch({"operator": "ops/a.py && id"}).run


def test_comments_need_permission(api, fake) -> None:
    fake.permissions.update({"alice": "write", "bob": "triage"})
    ok = gate(comment("/foundry optimize ops/a.py --budget 16"), config=CONFIG, api=api, head_sha=B)
    assert ok.run and ok.target.budget == 16 and ok.target.comment_id == 5 and ok.target.head == B
    refused = gate(comment("/foundry optimize ops/a.py", login="bob"), config=CONFIG, api=api, head_sha=B)
    assert not refused.run and "write access" in refused.reply
    too_much = gate(comment("/foundry optimize ops/a.py --budget 17"), config=CONFIG, api=api, head_sha=B)
    assert not too_much.run and "from 1 to 16" in too_much.reply and "Usage:" in too_much.reply
    bare = gate(comment("/foundry optimize"), config=CONFIG, api=api, head_sha=B)
    assert not bare.run and "name the operator" in bare.reply
    no_token = gate(comment("/foundry optimize ops/a.py"), config=CONFIG, api=None, head_sha=B)
    assert not no_token.run and "no GitHub token" in no_token.reason


def test_ignored_comments_make_no_api_call(api, fake) -> None:
    assert not gate(comment("/foundry optimize", login="renovate[bot]"), config=CONFIG, api=api, head_sha=B).run
    assert not gate(comment("looks good"), config=CONFIG, api=api, head_sha=B).run
    assert fake.calls == []
