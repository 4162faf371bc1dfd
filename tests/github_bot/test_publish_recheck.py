"""Publish checks each kernel itself (`foundry check` on the CPU, in a child without the token) before any
pull request: an artifact that claims a wrong kernel is verified gets no pull request."""

from __future__ import annotations

import json

import pytest
from harness import ZERO, kernel_source, operator_source

pytestmark = pytest.mark.e2e

OP = "ops/scale.py"
BRANCH = "foundry/main/ops-scale"


def optimized(bot, tmp_path):
    bot.candidates[OP] = kernel_source(2.0)
    sha = bot.dev.commit({OP: operator_source(2.0)}, "add scale")
    bot.dev.push()
    payload = bot.push_payload(ZERO, sha)
    artifacts = tmp_path / "artifacts"
    assert bot.run("optimize", bot.env("push", payload, sha), artifacts) == 0
    return payload, sha, artifacts


def test_a_kernel_the_artifact_calls_verified_but_is_wrong_is_not_published(bot, tmp_path) -> None:
    payload, sha, artifacts = optimized(bot, tmp_path)
    wrong = kernel_source(3.0)  # the artifact swaps in a kernel that computes relu(x) * 3
    report = json.loads((artifacts / "ops-scale" / "report.json").read_text())
    report["best"]["source"] = wrong
    (artifacts / "ops-scale" / "report.json").write_text(json.dumps(report))
    (artifacts / "ops-scale" / "kernel.py").write_text(wrong)
    env = bot.env("push", payload, sha)
    assert bot.run("publish", env, artifacts) == 1
    assert bot.fake.pulls == {} and bot.branch_sha(BRANCH) is None
    summary = env.step_summary.read_text()
    assert "not published: publish's own check on the CPU (Triton interpreter" in summary
    assert "rejected the kernel" in summary and "mismatch" in summary


def test_a_published_kernel_was_checked_by_publish_and_its_timing_labelled(bot, tmp_path) -> None:
    payload, sha, artifacts = optimized(bot, tmp_path)
    env = bot.env("push", payload, sha)
    assert bot.run("publish", env, artifacts) == 0
    [pull] = bot.fake.open_pulls()
    assert "Correctness re-checked by publish on the CPU (Triton interpreter" in pull["body"]
    assert "Timing figures are as reported by the GPU job" in pull["body"]


def test_the_check_runs_without_the_token_in_an_export_without_git(bot, tmp_path, monkeypatch) -> None:
    """The child that imports the operator gets an allowlisted environment and a tree without .git."""
    from foundry import action
    from foundry.github import recheck
    from foundry.github.gitrepo import GitRepo

    canary = tmp_path / "seen.json"
    spy = operator_source(2.0).replace(
        "import torch\n",
        "import json, os, pathlib, torch\n"
        f"pathlib.Path({str(canary)!r}).write_text(json.dumps([dict(os.environ), os.path.exists('.git')]))\n",
        1,
    )
    sha = bot.dev.commit({OP: spy}, "add scale")
    bot.dev.push()
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret_canary")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary")
    work = tmp_path / "work"
    from gitfixtures import checkout

    checkout(bot.bare, work, sha)
    result = action.default_checker(GitRepo(work), sha, OP, kernel_source(2.0), "strict")
    assert result.verified, result.reason
    environ, has_git = json.loads(canary.read_text())
    assert not has_git
    assert not [k for k in environ if "TOKEN" in k or "KEY" in k], environ
    assert environ["TRITON_INTERPRET"] == "1" and environ["CUDA_VISIBLE_DEVICES"] == ""
    assert set(environ) - set(recheck.PASSED_ON) <= {"TRITON_INTERPRET", "CUDA_VISIBLE_DEVICES", "PWD", "LC_CTYPE"}
