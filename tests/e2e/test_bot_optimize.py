"""The whole bot as GitHub Actions runs it: `python -m foundry action run` in a child process,
the real `foundry optimize` (template writer, Triton interpreter, tiny budget), a real bare remote
and the local GitHub-compatible server."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from fake_github import TOKEN
from foundry.core.records import RunReport
from harness import ZERO, operator_source, read_outputs

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("foundry.writers.template") is None,
        reason="foundry optimize needs the template writer (foundry.writers.template), not in this checkout",
    ),
]

CONFIG = "defaults: {budget: 2}\npull_requests: {labels: [perf]}\n"


def action_run(bot, env, tmp_path: Path) -> subprocess.CompletedProcess:
    child = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        # the package, and where the machine adds its own site directory (the GPU machine's wheels), that too
        "PYTHONPATH": os.pathsep.join(
            [p for p in sys.path if p.endswith("bot")]
            + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        ),
        "FOUNDRY_EXPERIENCE_DB": str(tmp_path / "experience.duckdb"),
        "FOUNDRY_API_TIMEOUT": "10",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": env.event_name,
        "GITHUB_EVENT_PATH": str(env.event_path),
        "GITHUB_REPOSITORY": env.repository,
        "GITHUB_SHA": env.sha,
        "GITHUB_WORKSPACE": str(env.workspace),
        "GITHUB_API_URL": env.api_url,
        "GITHUB_SERVER_URL": env.server_url,
        "GITHUB_RUN_ID": env.run_id,
        "GITHUB_STEP_SUMMARY": str(env.step_summary),
        "GITHUB_OUTPUT": str(env.output),
        "GITHUB_TOKEN": TOKEN,
        "FOUNDRY_BOT_LOGIN": "kernel-foundry[bot]",  # the account the fake writes as (an app's token)
    }
    if not torch.cuda.is_available():  # the interpreter on the CPU; on a GPU the kernels run there and are timed
        child["TRITON_INTERPRET"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "foundry", "action", "run", "--artifacts", str(env.workspace.parent / "artifacts")],
        cwd=env.workspace,
        env=child,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path; test_push_on_gpu_* covers CUDA machines")
def test_push_then_comment_with_the_real_optimizer(bot, tmp_path: Path) -> None:
    sha = bot.dev.commit({"ops/scale.py": operator_source(2.0), ".github/foundry.yml": CONFIG})
    bot.dev.push()
    env = bot.env("push", bot.push_payload(ZERO, sha), sha)
    proc = action_run(bot, env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    artifacts = env.workspace.parent / "artifacts"
    report = RunReport.model_validate_json((artifacts / "ops-scale" / "report.json").read_text())
    assert report.verified and report.writer == "template" and not report.timing_measured
    assert report.evaluated <= 2
    pulls = bot.fake.open_pulls()
    assert len(pulls) == 1
    kernel = bot.branch_file("foundry/main/ops-scale", "ops/scale_foundry.py")
    assert kernel == (artifacts / "ops-scale" / "kernel.py").read_text()
    assert "@triton.jit" in kernel and "class ModelNew" in kernel
    body = pulls[0]["body"]
    assert "not measured (needs a GPU)" in body and report.best.id in body
    assert bot.fake.issues[pulls[0]["number"]]["labels"] == ["perf"]
    outputs = read_outputs(env)
    assert outputs["pr-number"] == str(pulls[0]["number"]) and outputs["best-speedup"] == ""
    assert "## Kernel Foundry report" in env.step_summary.read_text()

    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue("again, with less")
    comment = bot.fake.add_comment(issue, "/foundry optimize ops/scale.py --budget 1", "alice")
    env2 = bot.env("issue_comment", bot.comment_payload(issue, comment), sha)
    proc = action_run(bot, env2, tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert len(bot.fake.pulls) == 1, "the open PR was updated, not duplicated"
    assert [r["content"] for r in bot.fake.reactions] == ["eyes", "rocket"]
    status = [c["body"] for c in bot.fake.comments.values() if "kernel-foundry:status" in c["body"]]
    assert len(status) == 1 and f"pull request #{pulls[0]['number']} updated" in status[0]
    plan = json.loads((env2.workspace.parent / "artifacts" / "plan.json").read_text())
    assert [o["budget"] for o in plan["operators"]] == [1]


@pytest.mark.gpu
def test_push_on_gpu_measures_and_publishes_only_a_gain(bot, tmp_path: Path) -> None:
    config = "defaults: {budget: 4}\npull_requests: {min_speedup: 1.0}\n"
    sha = bot.dev.commit({"ops/scale.py": operator_source(2.0), ".github/foundry.yml": config})
    bot.dev.push()
    env = bot.env("push", bot.push_payload(ZERO, sha), sha)
    proc = action_run(bot, env, tmp_path)
    artifacts = env.workspace.parent / "artifacts"
    assert (artifacts / "ops-scale" / "report.json").exists(), proc.stderr[-4000:]
    report = RunReport.model_validate_json((artifacts / "ops-scale" / "report.json").read_text())
    assert report.timing_measured, proc.stderr[-4000:]
    timing = report.timing
    assert timing is not None and timing.eager_ms and timing.candidate_ms and timing.trials > 0
    speedup = timing.speedup_eager
    outputs = read_outputs(env)
    assert outputs["best-speedup"] == f"{speedup:.3f}"
    pulls = bot.fake.open_pulls()
    if report.verified and speedup >= 1.0:
        assert proc.returncode == 0, proc.stderr[-4000:]
        assert len(pulls) == 1 and pulls[0]["draft"] is False
        assert f"{speedup:.2f}× faster" in pulls[0]["title"]
        assert f"{timing.candidate_ms:.4f} ms" in pulls[0]["body"]
        assert "not measured" not in pulls[0]["body"].split("## Diagnosis")[0]
    else:
        assert pulls == []
        assert "no pull request" in env.step_summary.read_text()
