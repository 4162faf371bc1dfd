"""Shared machinery of the adversarial suites (CPU here, CUDA in tests/gpu/test_cheats_gpu.py).

Every candidate file declares what it is in a header of `# key: value` comments:

    # cheat: what it does (may continue on indented comment lines)
    # operator: softmax_rows            (a file in tests/cheats/operators/)
    # expect: KIND [rule=RULE[|RULE]]   (a FailureKind, or `verified`; a RULE is checked when given)
    # config: static_guard=false timeout_s=20   (EvaluatorConfig overrides, optional)
    # devices: cpu                      (where the cheat applies; default cpu and cuda)
    # isolate: cli                      (only run through `foundry check` in a subprocess)
    # uncaught: why the evaluator misses it today  (the test is a strict xfail)
"""

from __future__ import annotations

import hashlib
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
HEADER = re.compile(r"^# (cheat|fault|operator|expect|config|devices|isolate|uncaught): ?(.*)$")
# Honest candidate → its operator.
HONEST_CASES = {
    "softmax": "softmax_rows",
    "elementwise": "elementwise_chain",
    "linear": "linear_small",
    "tiny_loss": "tiny_loss",
    "scalar_loss": "scalar_loss",
}
TRIALS = 2  # correctness trials per evaluation (plus the operator's shape variants); 2 keeps "rewrite"


@dataclass(frozen=True)
class Case:
    path: Path
    what: str
    operator: str
    kind: FailureKind | None  # None: `expect: verified` (a control: the attack must change nothing)
    rule: str | None
    config: tuple[tuple[str, Any], ...] = ()
    devices: tuple[str, ...] = ("cpu", "cuda")
    isolate: str | None = None
    uncaught: str | None = None
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def source(self) -> str:
        return self.path.read_text()

    def param(self, device: str) -> Any:
        marks = []
        if self.uncaught:
            marks.append(pytest.mark.xfail(strict=True, reason=f"evaluator gap: {self.uncaught}"))
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
        kind=None if kind_text == "verified" else FailureKind(kind_text),
        rule=rule,
        config=tuple(config),
        devices=devices,
        isolate=fields.get("isolate"),
        uncaught=fields.get("uncaught"),
        extra=fields,
    )


def cases(folder: Path) -> list[Case]:
    return [parse_case(p) for p in sorted(folder.glob("*.py"))]


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
            loaded = load_operator(str(OPERATORS / f"{operator}.py"))
            self.cache[key] = CandidateEvaluator(loaded, config=EvaluatorConfig(**settings), device=self.device)
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
    assert failure.kind is case.kind, f"{case.name}: expected {case.kind}, got {summary}"
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
