"""`.github/foundry.yml`: which operators the bot looks at and how it optimizes them.

Validated with pydantic (unknown keys are errors); a bad file fails with a message that names the
key. `python -m foundry.github.config` prints the JSON schema that editors use
(.github/foundry.schema.json in this repository).
"""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import PurePosixPath
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from foundry.core.errors import FatalError

CONFIG_PATH = ".github/foundry.yml"
SCHEMA_ID = "https://kernel-foundry.dev/schemas/foundry.schema.json"

Writer = Literal["template", "llm", "all"]
Policy = Literal["strict", "hybrid"]
Precision = Literal["fp32", "tf32", "fp16", "bf16"]
Dtype = Literal["float32", "float16", "bfloat16"]

_OPERATOR_KEY = re.compile(r"^[\w.\-/]+\.py(::[A-Za-z_]\w*)?$")
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")  # GitHub's rule for user names
_TEAM = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}/[a-z0-9][a-z0-9_-]{0,99}$")


class ConfigError(FatalError):
    """The config file is invalid; the message names the key."""


class _Strict(BaseModel):
    # strict: `budget: "3"` and `budget: true` are errors, not 3 and 1 (the file is validated as JSON, where
    # lists are tuples and a whole number is a float, but no string or bool is a number)
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Settings(_Strict):
    """Settings an operator inherits from `defaults` and may override."""

    budget: int | None = Field(default=None, ge=1, le=10_000, description="candidates to evaluate")
    writer: Writer | None = Field(default=None, description="candidate writer")
    policy: Policy | None = Field(default=None, description="runtime guard policy")
    dtype: Dtype | None = Field(default=None, description="dtype of the operator's floating inputs")
    precision: Precision | None = Field(
        default=None, description="tolerance class from rules/tolerance.yaml (fp32: atol = rtol = 1e-4)"
    )
    inputs: tuple[tuple[int, ...], ...] | None = Field(
        default=None, description="input shapes, one list per input, used instead of get_inputs()"
    )
    training: bool | None = Field(
        default=None,
        description="used in training: forward and backward kernels, gradients checked (default: the operator "
        "file's FOUNDRY_TRAINING, else false)",
    )
    labels: tuple[str, ...] | None = Field(default=None, description="labels for the pull request")


class OperatorSettings(Settings):
    skip: bool = Field(default=False, description="never optimize this operator")


class PullRequestSettings(_Strict):
    labels: tuple[str, ...] = Field(default=("performance", "foundry"), description="labels on every PR")
    draft_when_unmeasured: bool = Field(
        default=True, description="open the PR as a draft when timing was not measured (no GPU)"
    )
    publish_unmeasured: bool = Field(
        default=True, description="open a PR for a verified kernel whose speed was not measured"
    )
    min_speedup: float = Field(default=1.05, ge=1.0, description="smallest speedup over eager worth a PR")
    assignees: tuple[str, ...] = Field(default=(), description="logins assigned to each new pull request")
    reviewers: tuple[str, ...] = Field(
        default=(), description="reviews requested on each new pull request: logins, or org/team-slug for a team"
    )

    @field_validator("assignees", "reviewers")
    @classmethod
    def _logins(cls, value: tuple[str, ...], info) -> tuple[str, ...]:  # noqa: ANN001
        for name in value:
            team = info.field_name == "reviewers" and "/" in name
            if not (_TEAM if team else _LOGIN).match(name):
                what = "a GitHub login" + (" or org/team-slug" if info.field_name == "reviewers" else "")
                raise ValueError(f"{name!r} is not {what}")
        return tuple(dict.fromkeys(value))

    def review_requests(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(users, team slugs) for the review-request API."""
        users = tuple(r for r in self.reviewers if "/" not in r)
        teams = tuple(r.split("/", 1)[1] for r in self.reviewers if "/" in r)
        return users, teams


class FoundryConfig(_Strict):
    version: Literal[1] = 1
    include: tuple[str, ...] = Field(default=("**/*.py",), description="globs of files that may hold operators")
    exclude: tuple[str, ...] = Field(
        default=("tests/**", "test_*.py", "**/test_*.py", "**/*_foundry.py", "setup.py", "docs/**"),
        description="globs of files never looked at",
    )
    defaults: Settings = Field(default_factory=Settings)
    operators: dict[str, OperatorSettings] = Field(
        default_factory=dict, description="per operator (path/to/file.py or path/to/file.py::Class) settings"
    )
    pull_requests: PullRequestSettings = Field(default_factory=PullRequestSettings)
    max_budget: int = Field(default=64, ge=1, le=10_000, description="largest --budget a comment may ask for")
    max_operators: int = Field(default=8, ge=1, le=100, description="most operators optimized per event")

    @field_validator("operators")
    @classmethod
    def _operator_keys(cls, value: dict[str, OperatorSettings]) -> dict[str, OperatorSettings]:
        """Keys in one form per operator, as detection names them: `file.py::Model` is `file.py` (the same
        operator). Two keys that name one operator are an error naming both: otherwise one of them would be
        ignored without a word (`file.py::Model`'s settings were, beside or even without `file.py`)."""
        canonical: dict[str, OperatorSettings] = {}
        given: dict[str, str] = {}
        for key, settings in value.items():
            path, _, name = key.partition("::")
            if not _OPERATOR_KEY.match(key) or ".." in PurePosixPath(path).parts:
                raise ValueError(f"{key!r} is not path/to/file.py or path/to/file.py::ClassName")
            if str(PurePosixPath(path)) != path:  # ./ops/a.py or ops//a.py would match no file
                raise ValueError(f"{key!r}: write the path as {str(PurePosixPath(path))!r}, relative to the root")
            ref = path if name in ("", "Model") else key
            if ref in given:
                raise ValueError(
                    f"{given[ref]!r} and {key!r} name the same operator ({name or 'Model'} of {path}): keep one"
                )
            given[ref] = key
            canonical[ref] = settings
        return canonical

    def wants(self, path: str) -> bool:
        """Whether a repository-relative file path passes include/exclude."""
        return any(glob_match(path, g) for g in self.include) and not any(glob_match(path, g) for g in self.exclude)

    def settings_for(self, ref: str) -> OperatorSettings:
        """Defaults overlaid with the operator's own entry (by `file.py::Class`, or `file.py` for Model)."""
        path, _, cls = ref.partition("::")
        entry = self.operators.get(path if cls in ("", "Model") else ref)
        merged = self.defaults.model_dump(exclude_none=True)
        if entry is not None:
            merged.update(entry.model_dump(exclude_none=True))
        return OperatorSettings(**merged)

    def labels_for(self, ref: str) -> tuple[str, ...]:
        own = self.settings_for(ref).labels or ()
        return tuple(dict.fromkeys((*self.pull_requests.labels, *own)))


def glob_match(path: str, pattern: str) -> bool:
    """Globs as users expect from .gitignore-like configs: `**/` spans directories (also none)."""
    regex = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            regex += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            regex += ".*"
            i += 2
        elif pattern[i] == "*":
            regex += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            regex += "[^/]"
            i += 1
        else:
            regex += re.escape(pattern[i])
            i += 1
    if "/" not in pattern:  # a bare name matches in any directory, like .gitignore
        return fnmatch.fnmatchcase(PurePosixPath(path).name, pattern)
    return re.fullmatch(regex, path) is not None


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def _given(value: object) -> str:
    """The value beside its key, unless it is a whole mapping (its own message names the keys at fault)."""
    return "" if isinstance(value, dict) else f" (given {value!r})"


# YAML 1.2 core scalars, as editors that check against the schema read the file: PyYAML's YAML 1.1 rules would
# turn `training: yes` into true, `budget: 1:30` into 90 and `budget: 010` into 8 where the schema sees strings
_YAML11_SCALARS = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
_YAML12_SCALARS = (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^[-+]?(?:0|[1-9][0-9]*)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader with YAML 1.2 core scalars, except that a key given twice in one mapping is an error,
    not the last one wins (a `<<` merge key may still be overridden, as YAML means it to be)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping", node.start_mark, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag not in _YAML11_SCALARS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, _pattern, _first in _YAML12_SCALARS:
    _UniqueKeyLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def parse_config(text: str | None, *, source: str = CONFIG_PATH) -> FoundryConfig:
    """Parse the YAML text of the config; None or an empty file gives the defaults."""
    if text is None or not text.strip():
        return FoundryConfig()
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{source}{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from exc
    if data is None:
        return FoundryConfig()
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping of keys, not {type(data).__name__}")
    try:
        as_json = json.dumps(data)
    except (TypeError, ValueError) as exc:  # dates, sets, non-string keys that JSON cannot hold
        raise ConfigError(
            f"{source}: holds a value that is not a string, number, bool, list or mapping: {exc}"
        ) from exc
    try:
        return FoundryConfig.model_validate_json(as_json)
    except ValidationError as exc:
        problems = "; ".join(f"key `{_where(e['loc'])}`: {e['msg']}{_given(e['input'])}" for e in exc.errors())
        raise ConfigError(f"{source}: {problems}") from exc


def json_schema() -> dict:
    schema = FoundryConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "Kernel Foundry configuration (.github/foundry.yml)"
    return schema


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m foundry.github.config > .github/foundry.schema.json
    import sys

    sys.stdout.write(schema_text())
