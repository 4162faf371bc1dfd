"""GitHub event payloads (push, issue_comment, workflow_dispatch, schedule) and the `/foundry` command.

Payload models ignore fields they do not use — GitHub adds fields to payloads all the time and
the bot must keep working — but every field the bot relies on is required and typed, so a
malformed payload fails with a message naming the field. Text from the event (comment bodies,
branch names, inputs) is data: it is parsed here and never reaches a shell.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from foundry.core.errors import FatalError

COMMAND = "/foundry"
ALLOWED_PERMISSIONS = frozenset({"admin", "maintain", "write"})
_OPERATOR = re.compile(r"^[A-Za-z0-9_][\w.\-/]*\.py(::[A-Za-z_]\w*)?$")

HELP = (
    "Usage: `/foundry optimize [OPERATOR] [--budget N]` on the first line of a comment.\n\n"
    "- `OPERATOR` is `path/to/file.py` (class `Model`) or `path/to/file.py::ClassName`; "
    "on a pull request it may be left out to optimize the operators the pull request changed.\n"
    "- `--budget N` caps the candidates evaluated (at most {max_budget} here).\n"
    "- `/foundry stop` cancels the run this thread started.\n"
    "- `/foundry retry` runs this thread's last accepted `/foundry optimize` again.\n"
    "- `/foundry help` shows this message."
)


class EventError(FatalError):
    """The event payload is not what the bot expects; the message names the field."""


class _Payload(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class User(_Payload):
    login: str
    type: str = "User"

    @property
    def is_bot(self) -> bool:
        return self.type == "Bot" or self.login.endswith("[bot]")


class Owner(_Payload):
    login: str


class Repository(_Payload):
    full_name: str = Field(pattern=r"^[\w.\-]+/[\w.\-]+$")
    default_branch: str = "main"
    owner: Owner | None = None


class PushEvent(_Payload):
    ref: str
    before: str = Field(pattern=r"^[0-9a-f]{40}$")
    after: str = Field(pattern=r"^[0-9a-f]{40}$")
    forced: bool = False
    created: bool = False
    deleted: bool = False
    repository: Repository
    sender: User | None = None

    @property
    def branch(self) -> str | None:
        return self.ref.removeprefix("refs/heads/") if self.ref.startswith("refs/heads/") else None


class Comment(_Payload):
    id: int
    body: str
    user: User
    html_url: str = ""


class IssuePullRequest(_Payload):
    url: str = ""


class Issue(_Payload):
    number: int
    state: str = "open"  # open | closed: a closed issue or pull request is not served
    pull_request: IssuePullRequest | None = None

    @property
    def is_pull_request(self) -> bool:
        return self.pull_request is not None


class IssueCommentEvent(_Payload):
    action: str
    issue: Issue
    comment: Comment
    repository: Repository
    sender: User


class DispatchEvent(_Payload):
    ref: str
    inputs: dict[str, str | int | bool | None] | None = None
    repository: Repository
    sender: User | None = None


class ScheduleEvent(_Payload):
    """`on: schedule` (a nightly sweep): the cron line that fired; GITHUB_SHA is the default branch's head."""

    schedule: str = ""
    repository: Repository


EventName = Literal["push", "issue_comment", "workflow_dispatch", "schedule"]
Event = PushEvent | IssueCommentEvent | DispatchEvent | ScheduleEvent
_MODELS: dict[str, type[Event]] = {
    "push": PushEvent,
    "issue_comment": IssueCommentEvent,
    "workflow_dispatch": DispatchEvent,
    "schedule": ScheduleEvent,
}


def load_event(name: str, path: Path) -> Event:
    """Read and validate $GITHUB_EVENT_PATH for $GITHUB_EVENT_NAME."""
    model = _MODELS.get(name)
    if model is None:
        raise EventError(
            f"GITHUB_EVENT_NAME={name!r} is not an event Kernel Foundry handles "
            f"(it handles {', '.join(sorted(_MODELS))})"
        )
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise EventError(f"cannot read the event payload {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise EventError(f"the event payload {path} is not JSON: {exc.msg} at line {exc.lineno}") from exc
    return parse_event(name, data)


def parse_event(name: str, data: object) -> Event:
    model = _MODELS[name]
    if not isinstance(data, dict):
        raise EventError(f"the {name} payload must be a JSON object, not {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"field `{'.'.join(str(p) for p in e['loc'])}`: {e['msg']}" for e in exc.errors()[:5])
        raise EventError(f"malformed {name} payload: {problems}") from exc


class OptimizeCommand(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    verb: Literal["optimize", "stop", "retry"] = "optimize"
    operator: str | None = None
    budget: int | None = None


class CommandError(Exception):
    """A /foundry command the bot cannot follow; the message is the reply (without help)."""


def valid_operator(text: str) -> bool:
    path = text.partition("::")[0]
    parts = PurePosixPath(path).parts
    return bool(_OPERATOR.match(text)) and ".." not in parts and not path.startswith("/")


def parse_command(body: str, *, max_budget: int) -> OptimizeCommand | None:
    """The command on the first line of a comment; None when the comment is not for the bot.
    Raises CommandError for an unknown sub-command or bad arguments."""
    first = body.strip().splitlines()[0].strip() if body.strip() else ""
    if first != COMMAND and not first.startswith(COMMAND + " "):
        return None
    try:
        words = shlex.split(first[len(COMMAND) :], posix=True)
    except ValueError as exc:
        raise CommandError(f"could not read the command: {exc}") from exc
    if not words or words[0] in ("help", "--help", "-h"):
        raise CommandError("")
    if words[0] in ("stop", "retry"):
        if len(words) > 1:
            raise CommandError(f"`{words[0]}` takes no arguments")
        return OptimizeCommand(verb=words[0])
    if words[0] != "optimize":
        raise CommandError(f"unknown command `{_clip(words[0])}`")
    operator: str | None = None
    budget: int | None = None
    rest = words[1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--budget" or word.startswith("--budget="):
            value = word.partition("=")[2] if "=" in word else (rest[i + 1] if i + 1 < len(rest) else "")
            i += 1 if "=" in word else 2
            if not value.isdigit() or not 1 <= int(value) <= max_budget:
                raise CommandError(f"`--budget` takes a whole number from 1 to {max_budget}")
            budget = int(value)
            continue
        if word.startswith("-"):
            raise CommandError(f"unknown option `{_clip(word)}`")
        if operator is not None:
            raise CommandError("name one operator per command")
        if not valid_operator(word):
            raise CommandError(
                f"`{_clip(word)}` is not an operator: write `path/to/file.py` or `path/to/file.py::ClassName`"
            )
        operator = word
        i += 1
    return OptimizeCommand(operator=operator, budget=budget)


def help_text(max_budget: int) -> str:
    return HELP.format(max_budget=max_budget)


def _clip(text: str) -> str:
    text = text.replace("`", "'")
    return text if len(text) <= 60 else text[:57] + "…"
