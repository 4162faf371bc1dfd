"""After a sandboxed child ran, its job directory is the candidate's: the evaluator neither follows links there,
nor loads what the candidate planted, nor lets a later child import from it (issue 25, class 5)."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from foundry.core.records import Candidate, FailureKind
from foundry.evaluate import jobfiles
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig, job_dir_changed
from foundry.evaluate.isolation import Child, child_environment

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "cheats"
HONEST = (CHEATS / "honest" / "softmax.py").read_text()
FORGED = """
import json, os, sys
out = os.fdopen(int(sys.argv[2]), "wb", buffering=0)
facts = [{"name": "forged", "registers": 7777, "spills": 0, "target": "sm_90 (static compile)"}]
out.write((json.dumps({"phase": "compile", "error": None, "kernels": facts}) + "\\n").encode())
"""


class Payload:
    """A pickle that creates `marker` when unpickled (what a candidate would put in outputs.pt)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.mkdir, (str(self.marker),))


def job_dir(tmp_path: Path, source: str = HONEST) -> Path:
    jobdir = tmp_path / "foundry-job-x"
    (jobdir / "tmp").mkdir(parents=True)
    (jobdir / "triton-cache").mkdir()
    (jobdir / "candidate.py").write_text(source)
    (jobdir / "job.json").write_text("{}")
    jobfiles.save([[torch.ones(2)]], jobdir / "outputs.pt")
    return jobdir


def plant_package(directory: Path) -> None:
    (directory / "foundry" / "evaluate").mkdir(parents=True)
    (directory / "foundry" / "__init__.py").write_text("")
    (directory / "foundry" / "evaluate" / "__init__.py").write_text("")
    (directory / "foundry" / "evaluate" / "static_compile.py").write_text(FORGED)


def worker_outputs(path: Path) -> list:
    return CandidateEvaluator.worker_outputs(SimpleNamespace(is_cuda=False), path)  # type: ignore[arg-type]


def test_untouched_job_dir_is_accepted_and_its_outputs_load(tmp_path: Path):
    jobdir = job_dir(tmp_path)
    assert job_dir_changed(jobdir, HONEST) is None
    (out,) = worker_outputs(jobdir / "outputs.pt")
    assert torch.equal(out[0], torch.ones(2))


def test_mapped_load_maps_the_opened_file(tmp_path: Path):
    jobdir = job_dir(tmp_path)
    (out,) = jobfiles.load_untrusted(jobdir / "outputs.pt", mapped=True)
    assert torch.equal(out[0], torch.ones(2))
    (jobdir / "outputs.pt").unlink()
    (jobdir / "outputs.pt").symlink_to(tmp_path / "elsewhere.pt")
    with pytest.raises(jobfiles.UntrustedFile):
        jobfiles.load_untrusted(jobdir / "outputs.pt", mapped=True)


def test_symlinked_outputs_are_neither_followed_nor_loaded(tmp_path: Path):
    jobdir = job_dir(tmp_path)
    elsewhere = tmp_path / "forged.pt"
    jobfiles.save([[torch.zeros(2)]], elsewhere)  # valid outputs: only the link makes them wrong
    (jobdir / "outputs.pt").unlink()
    (jobdir / "outputs.pt").symlink_to(elsewhere)
    with pytest.raises(jobfiles.UntrustedFile, match="outputs.pt"):
        jobfiles.load_untrusted(jobdir / "outputs.pt")
    assert worker_outputs(jobdir / "outputs.pt") == []  # no outputs: the call plan rejects the candidate
    diag = job_dir_changed(jobdir, HONEST)
    assert diag is not None and diag.rule == "job_dir_changed" and "outputs.pt" in diag.message


def test_pickle_payload_in_outputs_never_runs(tmp_path: Path):
    jobdir = job_dir(tmp_path)
    marker = tmp_path / "payload-ran"
    (jobdir / "outputs.pt").unlink()
    torch.save([[torch.ones(2)], Payload(marker)], jobdir / "outputs.pt")
    assert worker_outputs(jobdir / "outputs.pt") == []
    with pytest.raises(pickle.UnpicklingError):
        jobfiles.load_untrusted(jobdir / "outputs.pt")
    assert not marker.exists()


def test_outputs_that_are_not_a_regular_file_or_too_large_are_refused(tmp_path: Path):
    jobdir = job_dir(tmp_path)
    with pytest.raises(jobfiles.UntrustedFile, match="more than 16"):
        jobfiles.load_untrusted(jobdir / "outputs.pt", limit=16)
    (jobdir / "outputs.pt").unlink()
    os.mkfifo(jobdir / "outputs.pt")  # would block a plain open for reading
    with pytest.raises(jobfiles.UntrustedFile, match="not a regular file"):
        jobfiles.load_untrusted(jobdir / "outputs.pt")
    assert worker_outputs(jobdir / "outputs.pt") == []


def test_outputs_of_another_shape_are_no_outputs(tmp_path: Path):
    jobdir = job_dir(tmp_path)
    jobfiles.save({"calls": [torch.ones(2)]}, jobdir / "outputs_after_timing.pt")
    assert worker_outputs(jobdir / "outputs_after_timing.pt") == []


@pytest.mark.parametrize("name", ["candidate.py", "signatures.json"])
def test_symlinked_job_text_is_a_changed_job(tmp_path: Path, name: str):
    jobdir = job_dir(tmp_path)
    target = tmp_path / "target.txt"
    target.write_text(HONEST)  # the same bytes: the link alone is refused
    (jobdir / name).unlink(missing_ok=True)
    (jobdir / name).symlink_to(target)
    with pytest.raises(jobfiles.JobChanged):
        jobfiles.read_checked(jobdir, (name,), "")
    diag = job_dir_changed(jobdir, HONEST)
    assert diag is not None and diag.kind is FailureKind.RUNTIME_GUARD and name in diag.message


def test_planted_package_is_a_changed_job(tmp_path: Path):
    jobdir = job_dir(tmp_path)
    plant_package(jobdir)
    diag = job_dir_changed(jobdir, HONEST)
    assert diag is not None and "'foundry'" in diag.message


def test_later_child_never_imports_a_package_planted_in_its_cwd(tmp_path: Path):
    """The static-compile child started with cwd = a directory holding a planted foundry/ package: -P keeps
    the cwd off sys.path, and the real module compiles the kernel (no forged facts)."""
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    plant_package(jobdir)
    source = HONEST
    raw = json.dumps({"nothing_here": [[], {}]})
    (jobdir / "candidate.py").write_text(source)
    (jobdir / "signatures.json").write_text(raw)
    env = {k: v for k, v in child_environment({}).items() if k != "TRITON_INTERPRET"}
    child = Child(
        jobdir,
        timeout_s=120,
        memory_mb=None,
        env=env,
        module="foundry.evaluate.static_compile",
        digest=jobfiles.digest(source.encode(), raw.encode()),
    )
    message = child.wait_message("compile")
    child.finish()
    assert message is not None and message["error"] is None, message
    assert message["kernels"] == [
        {"name": "nothing_here", "target": "sm_90 (static compile: kernel not found at module level)"}
    ]


def test_compile_statically_writes_only_into_a_fresh_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Called on a changed job directory (the evaluator checks it first, job_dir_changed): links the candidate
    left there are not followed (their targets stay as they were) and the package it planted is not imported."""
    from foundry.spec.loader import load_operator

    evaluator = CandidateEvaluator(
        load_operator(str(CHEATS / "operators" / "softmax_rows.py")),
        config=EvaluatorConfig(trials=1, static_compile=True, workdir=tmp_path),
    )
    jobdir = job_dir(tmp_path)
    plant_package(jobdir)
    outside = {name: tmp_path / f"outside-{name}" for name in ("candidate.py", "signatures.json")}
    for name, target in outside.items():
        target.write_text("untouched")
        (jobdir / name).unlink(missing_ok=True)
        (jobdir / name).symlink_to(target)
    facts, failure, _ = evaluator.compile_statically(jobdir, HONEST, {"nothing_here": [[], {}]})
    assert failure is None
    assert [f.target for f in facts] == ["sm_90 (static compile: kernel not found at module level)"]
    assert all(target.read_text() == "untouched" for target in outside.values())
    assert not list(tmp_path.glob("foundry-compile-*")), "the compile directory is removed"


@pytest.mark.parametrize("static_compile", [True, False], ids=["static-compile", "no-static-compile"])
@pytest.mark.parametrize("attack", ["redteam2_symlink_parent_write", "redteam2_shadow_static_compile"])
def test_candidate_that_changes_its_job_dir_is_rejected_and_writes_nothing_outside(
    tmp_path: Path, attack: str, static_compile: bool
):
    """With or without the static compile after it (a GPU evaluator has none): the job directory is checked."""
    from foundry.spec.loader import load_operator

    source = (CHEATS / "candidates" / f"{attack}.py").read_text()
    evaluator = CandidateEvaluator(
        load_operator(str(CHEATS / "operators" / "softmax_rows.py")),
        config=EvaluatorConfig(trials=1, static_compile=static_compile, static_guard=False, workdir=tmp_path),
    )
    verdict = evaluator.evaluate(Candidate(id="link", source=source))
    assert not verdict.verified
    assert verdict.failure is not None and verdict.failure.rule == "job_dir_changed", verdict.failure
    assert not (tmp_path / "foundry-redteam2-escape.py").exists()
