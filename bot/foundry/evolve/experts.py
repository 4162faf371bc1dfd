"""Expert roles from rules/experts/*.yaml: what each island of the optimizer focuses on.

One file per role. Unknown keys are errors, and so are duplicate names; the file name must match
the role's name, so a role is found where its name says it is.
"""

from __future__ import annotations

import logging
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from foundry.rules.loader import RulesError, read_yaml, rules_dir

log = logging.getLogger(__name__)


class ExpertRole(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str
    order: int = 100  # islands take roles in this order (then by name)
    focus: str
    preferred_genes: tuple[str, ...] = ()
    transformations: tuple[str, ...] = ()
    prompt: str  # the role's part of the LLM prompt
    model: str | None = None  # LLM model for this role; the writer's default when absent
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)

    @field_validator("prompt", "focus", "title")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value.strip()


def experts_dir(root: str | Path | None = None) -> Path:
    return Path(root) if root else rules_dir() / "experts"


def load_expert(path: Path) -> ExpertRole:
    try:
        role = ExpertRole.model_validate(read_yaml(path))
    except ValidationError as exc:
        raise RulesError(f"{path}: {exc}") from exc
    if role.name != path.stem:
        raise RulesError(f"{path}: the role is named {role.name!r}; the file must be {role.name}.yaml")
    return role


def load_experts(root: str | Path | None = None) -> tuple[ExpertRole, ...]:
    """Every role in the experts directory, in island order."""
    base = experts_dir(root)
    files = sorted(base.glob("*.yaml")) + sorted(base.glob("*.yml"))
    if not files:
        raise RulesError(f"{base}: no expert roles (*.yaml)")
    roles = [load_expert(path) for path in files]
    return tuple(sorted(roles, key=lambda r: (r.order, r.name)))


def assign_experts(roles: tuple[ExpertRole, ...], islands: int) -> tuple[ExpertRole, ...]:
    """The role leading each island: roles in order, cycling when there are more islands than roles."""
    if islands < 1:
        raise ValueError("at least one island")
    if not roles:
        raise ValueError("no expert roles")
    return tuple(roles[i % len(roles)] for i in range(islands))
