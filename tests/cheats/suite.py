"""Shared machinery of the adversarial suites (CPU here, CUDA in tests/gpu/test_cheats_gpu.py).

Every candidate file declares what it is in a header of `# key: value` comments:

    # cheat: what it does (may continue on indented comment lines)
    # operator: softmax_rows            (a file in tests/cheats/operators/)
    # expect: KIND[|KIND] [rule=RULE[|RULE]]   (a FailureKind, or `verified`; a RULE is checked when given;
                                        several kinds where the secret order of checks decides which fires)
    # config: static_guard=false timeout_s=20   (EvaluatorConfig overrides, optional)
    # devices: cpu                      (where the cheat applies; default cpu and cuda)
    # isolate: cli                      (only run through `foundry check` in a subprocess)
    # uncaught: why the evaluator misses it today  (the test is a strict xfail)
    # uncaught-on: cpu                 (where `uncaught` holds; default everywhere: elsewhere it must be rejected)
    # partly: why the evaluator catches it in only part of its evaluations (a non-strict xfail: the secret draws
                                        decide; the file stays in the suite as the open case it is)

The honest LLM-style corpus (honest_llm/) has its own two-line header:

    # honest: the styles the candidate shows (may continue on indented comment lines)
    # operator: layer_norm              (a file in tests/cheats/operators/)
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import socket
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from foundry.core.records import Candidate, FailureKind, Verdict
from foundry.evaluate import landlock
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

HERE = Path(__file__).resolve().parent


OPERATORS = HERE / "operators"
CANDIDATES = HERE / "candidates"
GPU_CANDIDATES = HERE / "candidates_gpu"
FAULTS = HERE / "faults"
HONEST = HERE / "honest"
HONEST_LLM = HERE / "honest_llm"
HEADER = re.compile(r"^# (cheat|fault|operator|expect|config|devices|isolate|uncaught-on|uncaught|partly): ?(.*)$")
# Honest candidate → its operator.
HONEST_CASES = {
    "softmax": "softmax_rows",
    "elementwise": "elementwise_chain",
    "linear": "linear_small",
    "tiny_loss": "tiny_loss",
    "scalar_loss": "scalar_loss",
}
TRIALS = 2  # correctness trials per evaluation (plus the operator's shape variants); 2 keeps "rewrite"
HONEST_LLM_MIN_FILES = 32
HONEST_LLM_MIN_VERIFIED = 0.95  # issue 25's bar: at least 95% of the honest LLM-style corpus is verified
# Honest files the checker still refuses, each with the reason (file → rule and why it is a false positive).
# Their per-file tests are non-strict xfails; the 95% bar still counts them as rejected.
HONEST_LLM_KNOWN_REJECTED: dict[str, str] = {
    "rt18_mha_tf32": "rejected in 1 of 7 CPU runs (the reason was not kept; verified in the other 6): a TF32 attention "
    "block after a class reference that runs MultiheadAttention in its math form, a tail of the TF32 slack not yet "
    "understood",
}


@dataclass(frozen=True)
class Case:
    path: Path
    what: str
    operator: str
    kind: FailureKind | None  # None: `expect: verified` (a control: the attack must change nothing)
    rule: str | None
    config: tuple[tuple[str, Any], ...] = ()
    other_kinds: tuple[FailureKind, ...] = ()  # KIND|OTHER: either may reject it
    devices: tuple[str, ...] = ("cpu", "cuda")
    isolate: str | None = None
    uncaught: str | None = None
    uncaught_on: tuple[str, ...] = ("cpu", "cuda")
    partly: str | None = None
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def source(self) -> str:
        return self.path.read_text()

    def param(self, device: str) -> Any:
        marks = []
        if self.uncaught and device in self.uncaught_on:
            marks.append(pytest.mark.xfail(strict=True, reason=f"evaluator gap: {self.uncaught}"))
        elif self.partly:
            marks.append(pytest.mark.xfail(strict=False, reason=f"caught in part of the evaluations: {self.partly}"))
        if device not in self.devices:
            marks.append(pytest.mark.skip(reason=f"this cheat only applies on {', '.join(self.devices)}"))
        return pytest.param(self, id=self.name, marks=marks)


def parse_value(text: str) -> Any:
    lowered = text.lower()
    if lowered in {"true", "false"}:
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_case(path: Path) -> Case:
    fields: dict[str, str] = {}
    last = None
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        match = HEADER.match(line)
        if match:
            last = match.group(1)
            fields[last] = match.group(2).strip()
        elif last is not None and line.startswith("#  "):
            fields[last] += " " + line[1:].strip()
    missing = [k for k in ("operator", "expect") if k not in fields]
    if missing or not ({"cheat", "fault"} & set(fields)):
        raise ValueError(f"{path.name}: header lacks {missing or ['cheat/fault']}")
    kind_text, _, rest = fields["expect"].partition(" ")
    rule = (rest.removeprefix("rule=").strip() or None) if rest.startswith("rule=") else None
    config = []
    for item in fields.get("config", "").split():
        key, _, value = item.partition("=")
        config.append((key, parse_value(value)))
    devices = tuple(d.strip() for d in fields.get("devices", "cpu, cuda").split(",") if d.strip())
    return Case(
        path=path,
        what=fields.get("cheat") or fields["fault"],
        operator=fields["operator"],
        kind=None if kind_text == "verified" else FailureKind(kind_text.split("|")[0]),
        other_kinds=tuple(FailureKind(k) for k in kind_text.split("|")[1:]),
        rule=rule,
        config=tuple(config),
        devices=devices,
        isolate=fields.get("isolate"),
        uncaught=fields.get("uncaught"),
        uncaught_on=tuple(d.strip() for d in fields.get("uncaught-on", "cpu, cuda").split(",") if d.strip()),
        partly=fields.get("partly"),
        extra=fields,
    )


def cases(folder: Path) -> list[Case]:
    return [parse_case(p) for p in sorted(folder.glob("*.py"))]


HONEST_HEADER = re.compile(r"^# (honest|operator): ?(.*)$")


@dataclass(frozen=True)
class HonestCase:
    """A correct candidate written the way LLMs write Triton: it must be verified."""

    path: Path
    style: str
    operator: str

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def source(self) -> str:
        return self.path.read_text()

    def param(self) -> Any:
        known = HONEST_LLM_KNOWN_REJECTED.get(self.name)
        marks = [pytest.mark.xfail(strict=False, reason=f"checker gap: {known}")] if known else []
        return pytest.param(self, id=self.name, marks=marks)


def parse_honest(path: Path) -> HonestCase:
    fields: dict[str, str] = {}
    last = None
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        match = HONEST_HEADER.match(line)
        if match:
            last = match.group(1)
            fields[last] = match.group(2).strip()
        elif last is not None and line.startswith("#  "):
            fields[last] += " " + line[1:].strip()
    missing = [k for k in ("honest", "operator") if not fields.get(k)]
    if missing:
        raise ValueError(f"{path.name}: header lacks {missing}")
    return HonestCase(path=path, style=fields["honest"], operator=fields["operator"])


def honest_cases(folder: Path = HONEST_LLM) -> list[HonestCase]:
    return [parse_honest(p) for p in sorted(folder.glob("*.py"))]


class VerdictStore:
    """Verdicts of the honest corpus shared by every test of one pytest session, xdist workers included:
    whichever test reaches a candidate first evaluates it under a file lock and stores the verdict; the
    others (the per-file test or the summary, on any worker) wait for the lock and read it. Each candidate is
    evaluated once per session."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def get(self, case: HonestCase, evaluators: Evaluators) -> Verdict:
        digest = hashlib.sha256(case.source.encode()).hexdigest()[:12]
        path = self.folder / f"{case.name}-{digest}.json"
        with open(self.folder / f"{case.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if path.is_file():
                return Verdict.model_validate_json(path.read_text())
            verdict = evaluators.get(case.operator).evaluate(candidate(case.source, case.name))
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(verdict.model_dump_json())
            partial.replace(path)
            return verdict


def rejection_text(verdict: Verdict) -> str:
    failure = verdict.failure
    if failure is None:
        return "VERIFIED"
    evidence = failure.evidence.strip().splitlines()
    return failure.headline() + (f"\n      evidence: {evidence[0][:200]}" if evidence else "")


def candidate(source: str, name: str = "") -> Candidate:
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    return Candidate(id=f"{name or 'cand'}-{digest}", source=source, writer="manual")


class Evaluators:
    """One evaluator per (operator, config), kept for a whole test module: the reference is loaded once
    and the same parent evaluates candidate after candidate (faults included)."""

    def __init__(self, device: str | None = None) -> None:
        self.device = device
        self.cache: dict[tuple[str, tuple[tuple[str, Any], ...]], CandidateEvaluator] = {}

    def get(self, operator: str, config: tuple[tuple[str, Any], ...] = ()) -> CandidateEvaluator:
        key = (operator, config)
        if key not in self.cache:
            # The default child per candidate (what `foundry check` uses). warm_pool=True measured no faster
            # on this 2-core machine: the pre-import competes with the running candidate for the CPU; on
            # the GPU machine (16 cores) the next child starts its imports and CUDA context ahead.
            gpu = self.device.startswith("cuda")
            settings = {"trials": TRIALS, "warm_pool": gpu, **dict(config)}
            policy = str(settings.pop("policy", "strict"))  # `# config: policy=hybrid`
            loaded = load_operator(str(OPERATORS / f"{operator}.py"))
            self.cache[key] = CandidateEvaluator(
                loaded, policy=policy, config=EvaluatorConfig(**settings), device=self.device
            )
        return self.cache[key]

    def close(self) -> None:
        for evaluator in self.cache.values():
            evaluator.close()

    def evaluate(self, case: Case) -> Verdict:
        return self.get(case.operator, case.config).evaluate(candidate(case.source, case.name))


def rules_fired(verdict: Verdict) -> set[str]:
    return {d.rule for d in verdict.diagnoses if d.rule}


def assert_rejected_as(verdict: Verdict, case: Case) -> None:
    """The verdict rejects the candidate with the declared kind (and rule), and names a rule or a line."""
    failure = verdict.failure
    summary = failure.headline() if failure is not None else "VERIFIED"
    assert not verdict.verified, f"{case.name}: {case.what} was verified; expected {case.kind}"
    assert failure is not None
    assert failure.kind in (case.kind, *case.other_kinds), f"{case.name}: expected {case.kind}, got {summary}"
    if case.rule is not None:  # RULE|OTHER: either rule may fire (e.g. at the CPU and at the GPU shape)
        expected = set(case.rule.split("|"))
        assert failure.rule in expected or expected & rules_fired(verdict), (
            f"{case.name}: expected rule {case.rule}, got {summary}"
        )
    assert failure.rule or failure.line, f"{case.name}: the rejection names neither a rule nor a line: {summary}"
    assert failure.message


# A prefix for a candidate that tries to write a file outside its job (ESCAPE_TO) and to send over TCP (PORT):
# both defined in a header escape_attempt writes; it catches its errors and goes on (the Landlock tests).
ESCAPE = """
import socket as _socket

def _try_escape():
    tried = []
    try:
        open(ESCAPE_TO, "w").write("a candidate was here")
    except OSError as exc:
        tried.append(type(exc).__name__)
    try:
        _socket.create_connection(("127.0.0.1", PORT), timeout=5).sendall(b"secrets")
    except OSError as exc:
        tried.append(type(exc).__name__)
    return tried

TRIED = _try_escape()
"""


class Escape(NamedTuple):
    verdict: Verdict
    target: Path  # the file it tried to write
    connected: bool  # whether its TCP connection reached the test's server
    sandboxed: bool  # whether the evaluator asked its workers to confine themselves


def escape_attempt(tmp_path: Path, config: EvaluatorConfig, device: str) -> Escape:
    """Evaluate the honest softmax behind ESCAPE on softmax_rows (the static guard off: it refuses open() and
    sockets before the sandbox is reached)."""
    target = tmp_path / "escape.txt"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.settimeout(0.5)
        header = f"ESCAPE_TO = {str(target)!r}\nPORT = {server.getsockname()[1]}\n"
        source = header + textwrap.dedent(ESCAPE) + (HONEST / "softmax.py").read_text()
        operator = load_operator(str(OPERATORS / "softmax_rows.py"))
        evaluator = CandidateEvaluator(operator, config=replace(config, static_guard=False), device=device)
        try:
            sandboxed = evaluator.env.get(landlock.ENV) == "1"
            verdict = evaluator.evaluate(Candidate(id="escape", source=source))
        finally:
            evaluator.close()
        try:
            connection, _ = server.accept()
            connection.close()
            connected = True
        except TimeoutError:
            connected = False
    return Escape(verdict, target, connected, sandboxed)
