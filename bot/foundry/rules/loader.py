"""rules/*.yaml → frozen pydantic models. The rules directory ships beside the package (repo root)
or comes from FOUNDRY_RULES_DIR."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError


class RulesError(Exception):
    """The rules directory is missing or a rules file is invalid."""


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


T = TypeVar("T", bound=BaseModel)
Severity = Literal["error", "warning", "off"]


class GuardPolicy(Frozen):
    """rules/guard.yaml: the static guard's allowlists (syntax lives in the guard's code)."""

    rules: dict[str, Severity]
    allowed_imports: tuple[str, ...]
    allowed_builtins: tuple[str, ...]
    allowed_objects: dict[str, tuple[str, ...]]  # group → dotted paths (`module.*`: its public non-module members)
    allowed_decorators: tuple[str, ...]
    forbidden_attributes: tuple[str, ...]
    stdlib_attribute_exceptions: tuple[str, ...] = ()


class Tolerance(Frozen):
    atol: float
    rtol: float


class TolerancePolicy(Frozen):
    precisions: dict[str, Tolerance]
    trials: int = 3
    probe_scale: float = 0.01

    def for_precision(self, precision: str) -> Tolerance:
        if precision not in self.precisions:
            raise RulesError(f"unknown precision {precision!r}; known: {', '.join(self.precisions)}")
        return self.precisions[precision]


class RuntimePolicy(Frozen):
    allocation: tuple[str, ...]
    view: tuple[str, ...]
    layout: tuple[str, ...]
    hybrid_default: tuple[str, ...] = ()

    def strict_ops(self) -> frozenset[str]:
        return frozenset(self.allocation + self.view + self.layout)


class Rules(Frozen):
    guard: GuardPolicy
    tolerance: TolerancePolicy
    runtime: RuntimePolicy
    root: str


def rules_dir() -> Path:
    env = os.environ.get("FOUNDRY_RULES_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "rules"
        if (candidate / "guard.yaml").is_file():
            return candidate
    raise RulesError("cannot find the rules directory; set FOUNDRY_RULES_DIR")


def read_yaml(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise RulesError(f"{path}: {exc}") from exc


def parse(model: type[T], path: Path) -> T:
    try:
        return model.model_validate(read_yaml(path))
    except ValidationError as exc:
        raise RulesError(f"{path}: {exc}") from exc


@functools.cache
def load_rules(root: str | None = None) -> Rules:
    base = Path(root) if root else rules_dir()
    return Rules(
        guard=parse(GuardPolicy, base / "guard.yaml"),
        tolerance=parse(TolerancePolicy, base / "tolerance.yaml"),
        runtime=parse(RuntimePolicy, base / "runtime.yaml"),
        root=str(base),
    )
