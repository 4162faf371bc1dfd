"""Hints: a trigger the optimizer evaluates against an op signature and/or a diagnosis, a suggestion
for the writer, optional genes. Seed hints ship as YAML in the repository's experience/seeds/."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from foundry.core.errors import FatalError
from foundry.core.records import FailureKind, Verdict
from foundry.experience.signature import CLASS_NAMES, OpSignature

log = logging.getLogger(__name__)

Bound = Literal["memory", "compute", "latency"]
GeneValue = int | float | str | bool


class SeedError(FatalError):
    """A seed hint file is unreadable or invalid; the message names the file."""


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DiagnosisFacts(Frozen):
    """What a trigger may ask about a diagnosis. Build it from a Verdict with facts_from_verdict."""

    verified: bool | None = None
    failure: FailureKind | None = None
    bound: Bound | None = None
    pct_of_floor: float | None = None
    spills: int | None = None
    registers: int | None = None


def facts_from_verdict(verdict: Verdict) -> DiagnosisFacts:
    failure = verdict.failure
    roofline = verdict.timing.roofline if verdict.timing else None
    spills = [k.spills for k in verdict.kernels if k.spills is not None]
    registers = [k.registers for k in verdict.kernels if k.registers is not None]
    bound = roofline.bound if roofline and roofline.bound in ("memory", "compute", "latency") else None
    return DiagnosisFacts(
        verified=verdict.verified,
        failure=failure.kind if failure else None,
        bound=bound,
        pct_of_floor=roofline.pct_of_floor if roofline else None,
        spills=max(spills) if spills else None,
        registers=max(registers) if registers else None,
    )


class Trigger(Frozen):
    """All conditions given must hold; a list condition holds when any of its items does.
    Signature conditions need a signature; diagnosis conditions need diagnosis facts."""

    ops_any: tuple[str, ...] = ()
    ops_all: tuple[str, ...] = ()
    classes_any: tuple[str, ...] = ()
    classes_all: tuple[str, ...] = ()
    classes_none: tuple[str, ...] = ()
    dtypes: tuple[str, ...] = ()
    min_numel: int | None = None
    max_numel: int | None = None
    min_last_dim: int | None = None
    max_last_dim: int | None = None
    bound: tuple[Bound, ...] = ()
    failure: tuple[FailureKind, ...] = ()
    spills: bool | None = None  # True: the kernel spills registers; False: it does not
    max_pct_of_floor: float | None = None  # roofline efficiency below this (percent)

    @field_validator("classes_any", "classes_all", "classes_none")
    @classmethod
    def _known_classes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - CLASS_NAMES)
        if unknown:
            raise ValueError(f"unknown op class(es) {unknown}; known: {sorted(CLASS_NAMES)}")
        return value

    def signature_conditions(self) -> list[str]:
        names = ("ops_any", "ops_all", "classes_any", "classes_all", "classes_none", "dtypes")
        names += ("min_numel", "max_numel", "min_last_dim", "max_last_dim")
        return [n for n in names if getattr(self, n) not in ((), None)]

    def diagnosis_conditions(self) -> list[str]:
        names = ("bound", "failure", "spills", "max_pct_of_floor")
        return [n for n in names if getattr(self, n) not in ((), None)]

    def specificity(self) -> int:
        """How much a match says: one per condition, one per extra op or class that must all be present."""
        extra = max(len(self.ops_all) - 1, 0) + max(len(self.classes_all) - 1, 0)
        return len(self.signature_conditions()) + len(self.diagnosis_conditions()) + extra

    @property
    def needs_diagnosis(self) -> bool:
        return bool(self.diagnosis_conditions())

    def matches(self, signature: OpSignature | None, facts: DiagnosisFacts | None = None) -> bool:
        if self.signature_conditions() and (signature is None or not self._signature_holds(signature)):
            return False
        if self.diagnosis_conditions() and (facts is None or not self._facts_hold(facts)):
            return False
        return True

    def _signature_holds(self, sig: OpSignature) -> bool:
        ops, classes = sig.op_set, sig.classes
        checks = (
            not self.ops_any or bool(ops & set(self.ops_any)),
            set(self.ops_all) <= ops,
            not self.classes_any or bool(classes & set(self.classes_any)),
            set(self.classes_all) <= classes,
            not classes & set(self.classes_none),
            not self.dtypes or sig.dtype in self.dtypes,
            self.min_numel is None or sig.max_numel >= self.min_numel,
            self.max_numel is None or sig.max_numel <= self.max_numel,
            self.min_last_dim is None or sig.last_dim >= self.min_last_dim,
            self.max_last_dim is None or sig.last_dim <= self.max_last_dim,
        )
        return all(checks)

    def _facts_hold(self, facts: DiagnosisFacts) -> bool:
        checks = (
            not self.bound or facts.bound in self.bound,
            not self.failure or facts.failure in self.failure,
            self.spills is None or (facts.spills is not None and (facts.spills > 0) == self.spills),
            self.max_pct_of_floor is None
            or (facts.pct_of_floor is not None and facts.pct_of_floor < self.max_pct_of_floor),
        )
        return all(checks)


class HintDef(Frozen):
    """A hint as written in a seed file or learned by a run."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    title: str
    context: str = ""  # the expert role it serves (rules/experts), or "" for any
    trigger: Trigger = Field(default_factory=Trigger)
    suggestion: str
    genes: dict[str, GeneValue] = Field(default_factory=dict)
    prior: float = Field(default=0.5, gt=0.0, lt=1.0)  # belief that applying it helps, before any try

    def content_hash(self) -> str:
        body = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(body.encode()).hexdigest()[:16]


class SeedFile(Frozen):
    version: Literal[1] = 1
    hints: tuple[HintDef, ...]


def seeds_dir() -> Path | None:
    """FOUNDRY_EXPERIENCE_SEEDS, else experience/seeds/ beside the package (the repository root)."""
    env = os.environ.get("FOUNDRY_EXPERIENCE_SEEDS")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "experience" / "seeds"
        if candidate.is_dir():
            return candidate
    return None


def load_seed_hints(directory: Path | None = None) -> tuple[HintDef, ...]:
    """Every hint of every *.yaml in the directory, ids unique across files."""
    directory = directory if directory is not None else seeds_dir()
    if directory is None:
        log.warning("no experience/seeds directory found; the library starts without seed hints")
        return ()
    if not directory.is_dir():
        raise SeedError(f"{directory}: seed hint directory does not exist")
    hints: dict[str, HintDef] = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            data = yaml.safe_load(path.read_text())
            seed = SeedFile.model_validate(data)
        except (OSError, yaml.YAMLError, ValidationError) as exc:
            raise SeedError(f"{path}: invalid seed hint file: {exc}") from exc
        for hint in seed.hints:
            if hint.id in hints:
                raise SeedError(f"{path}: hint id {hint.id!r} is defined twice")
            hints[hint.id] = hint
    return tuple(hints.values())


def seeds_digest(hints: tuple[HintDef, ...]) -> str:
    joined = ",".join(sorted(h.content_hash() for h in hints))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


# Ranking: a Beta posterior on "applying this hint helps", with the hint's prior as pseudo-counts,
# scaled by the mean speedup it brought and by how specific its trigger is.
PRIOR_STRENGTH = 2.0
SPEEDUP_BONUS_CAP = 1.0  # log2 of the mean speedup, capped: a 2x hint gets the full bonus
SPECIFICITY_STEP = 0.05


def hint_score(prior: float, tries: int, successes: int, mean_speedup: float | None, conditions: int) -> float:
    rate = (successes + prior * PRIOR_STRENGTH) / (tries + PRIOR_STRENGTH)
    bonus = 0.0
    if mean_speedup is not None and mean_speedup > 1.0:
        bonus = min(math.log2(mean_speedup), SPEEDUP_BONUS_CAP)
    return rate * (1.0 + 0.5 * bonus) * (1.0 + SPECIFICITY_STEP * conditions)
