"""The two-stage workflow through action.yml itself: each job of the example workflow runs the composite
action's steps as action.yml defines them (their `if:`, `env:` and `run:` lines, in bash), with the `with:`
values the workflow passes, against a real git remote and the fake API, and the real `foundry optimize`."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from harness import ZERO, operator_source, read_outputs

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("foundry.writers.template") is None, reason="needs the template writer"
    ),
]

ROOT = Path(__file__).resolve().parents[2]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text())
    if True in data:
        data["on"] = data.pop(True)
    return data


def substitute(text: str, values: dict[str, str]) -> str:
    def one(m: re.Match) -> str:
        if m.group(1) not in values:
            raise AssertionError(f"the test does not know the expression {m.group(0)!r}")
        return values[m.group(1)]

    return EXPRESSION.sub(one, str(text))


def job_token(fake, job: dict, name: str) -> str:
    """The job's GITHUB_TOKEN: one the fake lets write exactly what the job's `permissions:` grant."""
    token = f"{name}-job-token"
    fake.tokens[token] = frozenset(scope for scope, level in job["permissions"].items() if level == "write")
    return token


def run_action(job: str, env, context: dict[str, str], tmp_path: Path, fake) -> dict[str, str]:
    """The example workflow's job `job`: its kernel-foundry step, run through action.yml's own steps, with a
    token that may do what the job's permissions say."""
    workflow = load(ROOT / ".github" / "workflows" / "foundry-example.yml")
    action = load(ROOT / "action.yml")
    [use] = [s for s in workflow["jobs"][job]["steps"] if "kernel-foundry" in str(s.get("uses", ""))]
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    inputs.update({k: substitute(v, context) for k, v in use["with"].items()})
    inputs["install"] = "none"  # the package is installed here; the install step's `if:` skips itself
    values = {f"inputs.{k}": v for k, v in inputs.items()}
    values.update({"github.token": job_token(fake, workflow["jobs"][job], job), "github.action_path": str(ROOT)})
    inputs = {k: substitute(v, values) for k, v in inputs.items()}
    values.update({f"inputs.{k}": v for k, v in inputs.items()})
    base = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p.endswith("bot")),
        "TRITON_INTERPRET": "1",
        "FOUNDRY_EXPERIENCE_DB": str(tmp_path / "experience.duckdb"),
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
        "FOUNDRY_BOT_LOGIN": "kernel-foundry[bot]",
    }
    for step in action["runs"]["steps"]:
        condition = step.get("if")
        if condition is not None:
            name, op, literal = re.fullmatch(r"inputs\.([\w-]+) (!=|==) '(.*)'", condition).groups()
            if (inputs[name] == literal) != (op == "=="):
                continue
        step_env = {k: substitute(v, values) for k, v in (step.get("env") or {}).items()}
        assert step["shell"] == "bash" and not EXPRESSION.search(step["run"])
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=env.workspace,
            env={**base, **step_env},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert proc.returncode == 0, f"{job}: {step['name']}: {proc.stderr[-4000:]}"
    return read_outputs(env)


def test_the_three_jobs_through_action_yml(bot, tmp_path: Path) -> None:
    config = "defaults: {budget: 1}\n"
    sha = bot.dev.commit({"ops/scale.py": operator_source(2.0), ".github/foundry.yml": config}, "add scale")
    bot.dev.push()
    payload = bot.push_payload(ZERO, sha)
    triage = run_action("triage", bot.env("push", payload, sha), {}, tmp_path, bot.fake)
    assert triage["run"] == "true" and triage["head"] == sha and triage["llm"] == "false"
    context = {"needs.triage.outputs.head": triage["head"], "runner.temp": str(tmp_path)}
    context["github.event_name == 'workflow_dispatch' && inputs.dry_run"] = "false"
    optimize = run_action("optimize", bot.env("push", payload, sha, ref=triage["head"]), context, tmp_path, bot.fake)
    assert optimize["operators"] == '["ops/scale.py"]'
    assert (tmp_path / "foundry-artifacts" / "ops-scale" / "report.json").is_file()
    assert bot.fake.writes() == [], "the optimize job writes nothing to GitHub"
    publish_env = bot.env("push", payload, sha, ref=triage["head"])
    published = run_action("publish", publish_env, context, tmp_path, bot.fake)
    [pull] = bot.fake.open_pulls()
    assert published["pr-number"] == str(pull["number"]) and pull["head"] == "foundry/main/ops-scale"
    assert "re-checked by publish" in pull["body"]


def test_a_comment_run_through_action_yml_moves_the_status_comment_from_the_gpu_job(bot, tmp_path: Path) -> None:
    """The example workflow's permissions let the GPU job edit the status comment (and nothing else), and the
    real optimizer's log says where its search is in the line the bot reads."""
    from foundry.github.progress import read_tick

    sha = bot.dev.commit({"ops/scale.py": operator_source(2.0), ".github/foundry.yml": "defaults: {budget: 1}\n"})
    bot.dev.push()
    bot.fake.permissions["alice"] = "write"
    issue = bot.fake.open_issue("scale is slow")
    comment = bot.fake.add_comment(issue, "/foundry optimize ops/scale.py", "alice")
    payload = bot.comment_payload(issue, comment)
    marker = f"kernel-foundry:status comment={comment['id']}"

    def status() -> str:
        [body] = [c["body"] for c in bot.fake.comments.values() if marker in c["body"]]
        return body

    triage = run_action("triage", bot.env("issue_comment", payload, sha), {}, tmp_path, bot.fake)
    assert triage["run"] == "true" and "2. ⏳ optimize on the GPU runner\n" in status()
    context = {"needs.triage.outputs.head": triage["head"], "runner.temp": str(tmp_path)}
    context["github.event_name == 'workflow_dispatch' && inputs.dry_run"] = "false"
    calls = len(bot.fake.calls)
    run_action("optimize", bot.env("issue_comment", payload, sha, ref=triage["head"]), context, tmp_path, bot.fake)
    gpu = [c for c in bot.fake.calls[calls:] if c.method != "GET"]
    assert gpu and all(c.method == "PATCH" and c.status == 200 and "/issues/comments/" in c.path for c in gpu)
    assert "2. ⏳ optimize on the GPU runner (1 of 1 finished)" in status() and "- ✅ `ops/scale.py`" in status()
    tick = read_tick(tmp_path / "foundry-artifacts" / "ops-scale" / "optimize.log")
    assert tick is not None and tick.budget == 1, "the bot reads the real optimizer's progress line"
    run_action("publish", bot.env("issue_comment", payload, sha, ref=triage["head"]), context, tmp_path, bot.fake)
    assert "finished" in status() and "is optimizing" not in status()
