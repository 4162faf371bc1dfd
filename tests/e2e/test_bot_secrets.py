"""The whole bot as GitHub Actions runs it (`python -m foundry action run` in a child process, the real
`foundry optimize` with the template writer), with secrets in the step's environment: a canary operator
writes down every environment it can read at import and in forward (its own, its parent's and its
grandparent's /proc/<pid>/environ). None of them holds a secret, and the run still opens its PR."""

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
from harness import ZERO, operator_source, read_outputs

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(torch.cuda.is_available(), reason="the CPU path (Triton interpreter)"),
    pytest.mark.skipif(
        importlib.util.find_spec("foundry.writers.template") is None,
        reason="foundry optimize needs the template writer (foundry.writers.template), not in this checkout",
    ),
]

SECRETS = {
    "OPENAI_API_KEY": "canary-openai-key-e2e-3b71",
    "RAY_AUTH_TOKEN": "canary-ray-token-e2e-9c02",
    "SOME_SECRET": "canary-some-secret-e2e-44d8",
}


def canary_source(dump: Path) -> str:
    return f'''import json
import os

import torch
from torch import nn


def _parent_of(pid):
    with open(f"/proc/{{pid}}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


def _dump(where):
    seen = {{"where": where, "pid": os.getpid(), "os.environ": dict(os.environ)}}
    parent = os.getppid()
    for name, pid in (("self", "self"), ("parent", parent), ("grandparent", _parent_of(parent))):
        try:
            with open(f"/proc/{{pid}}/environ", "rb") as fh:
                seen[name] = fh.read().decode(errors="replace")
        except OSError as exc:
            seen[name] = f"unreadable: {{exc}}"
    with open({str(dump)!r}, "a") as fh:
        fh.write(json.dumps(seen) + "\\n")


_dump("module")


class Model(nn.Module):
    """y = relu(x) * 2.0"""

    def forward(self, x):
        _dump("forward")
        return torch.relu(x) * 2.0


def get_inputs():
    return [torch.randn(64, 32)]


def get_init_inputs():
    return []
'''


def test_a_push_run_with_secrets_shows_operator_code_none_of_them(bot, tmp_path: Path) -> None:
    dump = tmp_path / "canary.jsonl"
    sha = bot.dev.commit({"ops/canary.py": canary_source(dump), ".github/foundry.yml": "defaults: {budget: 1}\n"})
    bot.dev.push()
    env = bot.env("push", bot.push_payload(ZERO, sha), sha)
    child = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p.endswith("bot")),
        "TRITON_INTERPRET": "1",
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
        "FOUNDRY_BOT_LOGIN": "kernel-foundry[bot]",
        **SECRETS,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "foundry", "action", "run", "--artifacts", str(env.workspace.parent / "artifacts")],
        cwd=env.workspace,
        env=child,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert len(bot.fake.open_pulls()) == 1, "the run still optimizes and publishes"
    assert dump.exists(), "the canary never ran"
    dumps = [json.loads(line) for line in dump.read_text().splitlines()]
    assert {d["where"] for d in dumps} >= {"module", "forward"}
    secrets = SECRETS | {"GITHUB_TOKEN": TOKEN}
    for d in dumps:
        assert "PATH=" in d["self"], "the canary could not even read its own environment"
        text = json.dumps(d)
        leaked = [name for name, value in secrets.items() if value in text or name in d["os.environ"]]
        assert not leaked, f"{d['where']} in pid {d['pid']} saw {leaked}"


@pytest.mark.parametrize(("writer", "needs_key"), [("llm", "true"), ("all", "true"), ("template", "false")])
def test_triage_tells_the_workflow_whether_the_optimize_job_needs_the_llm_key(bot, writer: str, needs_key: str) -> None:
    config = f"defaults: {{budget: 1, writer: {writer}}}\n"
    sha = bot.dev.commit({"ops/scale.py": operator_source(2.0), ".github/foundry.yml": config})
    bot.dev.push()
    env = bot.env("push", bot.push_payload(ZERO, sha), sha)
    assert bot.run("triage", env) == 0
    outputs = read_outputs(env)
    assert outputs["run"] == "true" and outputs["llm"] == needs_key
