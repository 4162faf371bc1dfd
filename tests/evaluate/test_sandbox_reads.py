"""Reads are an allowlist (evaluate/landlock.py): a candidate cannot read the checkout of the user's repository
(its .git/config holds the CI token), the evaluator's $HOME or working directory, /etc/shadow, /root or the
operator's file, in either namespace mode; honest candidates are still verified. Skipped without Landlock."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from foundry.core.records import Candidate
from foundry.evaluate import landlock, sandbox
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

pytestmark = pytest.mark.skipif(landlock.abi() < 1, reason="no Landlock in this kernel")

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "cheats"
MODES = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(sandbox.namespaces() != "bwrap", reason="no bwrap"))]
CANARY = "foundry-read-canary-7c1e"

PROBE = """
import json, os

reads = {}
for name, path in TARGETS.items():
    try:
        with open(path, "rb") as handle:
            reads[name] = "read " + handle.read(64).decode(errors="replace")
    except OSError as exc:
        reads[name] = type(exc).__name__
try:
    reads["/root listing"] = "listed " + ",".join(os.listdir("/root"))
except OSError as exc:
    reads["/root listing"] = type(exc).__name__
open("facts.json", "w").write(json.dumps(reads))
raise RuntimeError("probe done")
"""


def evaluate(tmp_path: Path, source: str, operator: str, monkeypatch: pytest.MonkeyPatch, mode: str):
    monkeypatch.setenv(sandbox.ENV, mode)
    workdir = tmp_path / "jobs"
    workdir.mkdir(exist_ok=True)
    config = EvaluatorConfig(trials=2, static_guard=False, keep_jobs=True, workdir=workdir)
    evaluator = CandidateEvaluator(load_operator(str(CHEATS / "operators" / operator)), config=config, device="cpu")
    try:
        return evaluator.evaluate(Candidate(id="probe", source=source)), workdir
    finally:
        evaluator.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_candidate_reads_nothing_of_the_runner(tmp_path, monkeypatch, mode):
    home = tmp_path / "home"
    (home / ".cargo").mkdir(parents=True)
    (home / ".netrc").write_text(CANARY)
    (home / ".cargo" / "credentials.toml").write_text(CANARY)
    cwd = tmp_path / "checkout"
    cwd.mkdir()
    (cwd / "canary.txt").write_text(CANARY)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    targets = {
        "git config": str(ROOT / ".git" / "config"),
        "netrc": str(home / ".netrc"),
        "cargo": str(home / ".cargo" / "credentials.toml"),
        "cwd canary": str(cwd / "canary.txt"),
        "shadow": "/etc/shadow",
        "operator": str(CHEATS / "operators" / "softmax_rows.py"),
        "readme": str(ROOT / "README.md"),
    }
    source = f"TARGETS = {targets!r}\n" + PROBE + (CHEATS / "honest" / "softmax.py").read_text()
    verdict, workdir = evaluate(tmp_path, source, "softmax_rows.py", monkeypatch, mode)
    assert not verdict.verified
    (job,) = [p for p in workdir.iterdir() if (p / "facts.json").exists()]
    reads = json.loads((job / "facts.json").read_text())
    assert set(reads) == {*targets, "/root listing"}
    opened = {name: result for name, result in reads.items() if not result.endswith(("Error", "Denied"))}
    assert opened == {}, opened
    assert CANARY not in verdict.model_dump_json()
    assert "(writes, reads)" in verdict.model_dump_json() or "Landlock" not in verdict.model_dump_json()


HONEST = ("softmax", "linear")  # all of honest/ run under the same confinement in tests/cheats
HONEST_LLM = ("cross_entropy_atomic_mean",)


@pytest.mark.parametrize("mode", MODES)
def test_honest_candidates_are_verified_under_the_read_allowlist(tmp_path, monkeypatch, mode):
    sys.path.insert(0, str(CHEATS))
    import suite  # noqa: PLC0415 - the cheat suite's pairing of candidates and operators

    cases = [(name, (CHEATS / "honest" / f"{name}.py").read_text(), suite.HONEST_CASES[name]) for name in HONEST]
    for name in HONEST_LLM:
        case = suite.parse_honest(CHEATS / "honest_llm" / f"{name}.py")
        cases.append((name, case.source, case.operator))
    for name, source, operator in cases:
        (tmp_path / name).mkdir()
        verdict, _ = evaluate(tmp_path / name, source, f"{operator}.py", monkeypatch, mode)
        assert verdict.verified, (name, verdict.model_dump_json()[-2000:])
