"""Drives `foundry action` the way GitHub Actions does: an event payload file, GITHUB_* variables,
a fresh checkout of the pushed commit with a real bare remote as origin, and the GitHub API served
by the local fake. The optimizer stand-in (for tests of the GitHub side) checks one hand-written
candidate with the real `foundry check` and reports that verdict; the full runs call the real
`foundry optimize`."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import torch
import triton
from fake_github import TOKEN, FakeGitHub
from foundry import action
from foundry.core.records import (
    Candidate,
    GenerationPoint,
    IslandSummary,
    OperatorSpec,
    RunReport,
    Verdict,
)
from foundry.github.api import GitHubApi, RetryPolicy
from foundry.report import render_report_markdown
from gitfixtures import Clone, checkout

ZERO = "0" * 40


def operator_source(factor: float) -> str:
    return f'''import torch
from torch import nn


class Model(nn.Module):
    """y = relu(x) * {factor}"""

    def forward(self, x):
        return torch.relu(x) * {factor}


def get_inputs():
    return [torch.randn(64, 32)]


def get_init_inputs():
    return []
'''


def kernel_source(factor: float) -> str:
    return f'''"""Triton kernel for y = relu(x) * {factor} (hand-written e2e fixture)."""

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _relu_scale_fwd_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0) * {factor}, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        _relu_scale_fwd_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y
'''


_VERDICTS: dict[str, Verdict] = {}  # real verdicts, reused across tests for the same pair of sources
_RECHECKS: dict[str, action.Recheck] = {}  # publish's real re-checks, reused the same way


class RecordedSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class Harness:
    def __init__(self, root: Path, fake: FakeGitHub, bare: Path, dev: Clone) -> None:
        self.root = root
        self.fake = fake
        self.bare = bare
        self.dev = dev
        self.candidates: dict[str, str] = {}  # operator ref → candidate source for the stand-in
        self.optimized: list[str] = []
        self.rechecked: list[str] = []
        self.sleeps = RecordedSleep()
        self._runs = 0

    # the optimizer stand-in ------------------------------------------------------------------------
    def check_optimizer(self, env: action.ActionEnv, op: action.PlannedOperator, out_dir: Path) -> int:
        self.optimized.append(op.ref)
        out_dir.mkdir(parents=True, exist_ok=True)
        path, _, cls = op.ref.partition("::")
        source = self.candidates[op.ref]
        operator_text = (env.workspace / path).read_text()
        key = hashlib.sha256((operator_text + "\0" + source).encode()).hexdigest()
        candidate_file = out_dir / "candidate.py"
        candidate_file.write_text(source)
        if key not in _VERDICTS:
            proc = subprocess.run(
                [sys.executable, "-m", "foundry", "check", op.ref, str(candidate_file), "--json"],
                cwd=env.workspace,
                capture_output=True,
                text=True,
                check=False,
                env={**os.environ, "TRITON_INTERPRET": "1"},
            )
            assert proc.returncode in (0, 1), proc.stderr
            _VERDICTS[key] = Verdict.model_validate_json(proc.stdout)
        verdict = _VERDICTS[key]
        best = Candidate(id=verdict.candidate_id, source=source, writer="manual", expert="e2e fixture")
        failure = verdict.failure
        report = RunReport(
            operator=OperatorSpec(path=path, class_name=cls or "Model", name=op.slug),
            verified=verdict.verified,
            policy=verdict.policy,
            writer="manual",
            device=verdict.device,
            torch_version=torch.__version__,
            triton_version=triton.__version__,
            timing_measured=bool(verdict.timing and verdict.timing.measured),
            best=best,
            best_verdict=verdict,
            budget=op.budget or 1,
            evaluated=1,
            islands=(
                IslandSummary(
                    island=0,
                    expert="e2e fixture",
                    evaluated=1,
                    verified=int(verdict.verified),
                    best_candidate_id=best.id if verdict.verified else None,
                    failures={str(failure.kind): 1} if failure else {},
                ),
            ),
            history=(GenerationPoint(generation=0, island=0, evaluated=1, verified=int(verdict.verified)),),
            failures={str(failure.kind): 1} if failure else {},
            notes=("e2e stand-in: one hand-written candidate checked with `foundry check`",),
        )
        (out_dir / "report.json").write_text(report.model_dump_json(indent=2))
        (out_dir / "report.md").write_text(render_report_markdown(report))
        if verdict.verified:
            (out_dir / "kernel.py").write_text(source)
        return 0 if verdict.verified else 1

    def recheck(self, git, commit: str, ref: str, kernel: str, policy: str) -> action.Recheck:
        """Publish's real re-check (`foundry check` in a child, on the CPU), cached per operator and kernel."""
        key = hashlib.sha256("\0".join((git.show(commit, ref.partition("::")[0]) or "", ref, kernel, policy)).encode())
        if key.hexdigest() not in _RECHECKS:
            self.rechecked.append(ref)
            _RECHECKS[key.hexdigest()] = action.default_checker(git, commit, ref, kernel, policy)
        return _RECHECKS[key.hexdigest()]

    def api(self, env: action.ActionEnv) -> GitHubApi:
        return GitHubApi(
            env.repository,
            env.token,
            base_url=env.api_url,
            timeout_s=1,
            retry=RetryPolicy(sleep=self.sleeps),
            throttle=False,
            bot_login="kernel-foundry[bot]",
        )

    @property
    def parts(self) -> action.Parts:
        return action.Parts(api_factory=self.api, optimizer=self.check_optimizer, checker=self.recheck)

    # events ----------------------------------------------------------------------------------------
    def env(
        self,
        name: str,
        payload: dict,
        sha: str,
        *,
        token: str | None = TOKEN,
        ref: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> action.ActionEnv:
        """GITHUB_SHA is sha; the checkout is at ref (actions/checkout's `ref:`), else at sha."""
        self._runs += 1
        run_dir = self.root / f"run{self._runs}"
        run_dir.mkdir()
        event_path = run_dir / "event.json"
        event_path.write_text(json.dumps(payload))
        workspace = checkout(self.bare, run_dir / "workspace", ref or sha)
        (run_dir / "summary.md").touch()
        (run_dir / "output.txt").touch()
        return action.ActionEnv(
            event_name=name,
            event_path=event_path,
            repository="acme/models",
            sha=sha,
            workspace=workspace,
            api_url=self.fake.api_url,
            server_url=self.fake.root,
            run_id=str(1000 + self._runs),
            token=token,
            step_summary=run_dir / "summary.md",
            output=run_dir / "output.txt",
            extra=dict(extra or {}),
        )

    def repository(self) -> dict:
        return {
            "full_name": "acme/models",
            "name": "models",
            "default_branch": "main",
            "owner": {"login": "acme"},
            "url": f"{self.fake.api_url}/repos/acme/models",
        }

    def push_payload(self, before: str, after: str, branch: str = "main", **extra: object) -> dict:
        return {
            "ref": f"refs/heads/{branch}",
            "before": before,
            "after": after,
            "created": before == ZERO,
            "deleted": False,
            "forced": False,
            "repository": self.repository(),
            "sender": {"login": "dev", "type": "User"},
            **extra,
        }

    def comment_payload(self, number: int, comment: dict, *, action_name: str = "created", pull: bool = False) -> dict:
        issue: dict = {"number": number, "title": "t", "url": f"{self.fake.api_url}/repos/acme/models/issues/{number}"}
        if pull:
            issue["pull_request"] = {"url": f"{self.fake.api_url}/repos/acme/models/pulls/{number}"}
        login = comment["user"]
        return {
            "action": action_name,
            "issue": issue,
            "comment": {
                "id": comment["id"],
                "body": comment["body"],
                "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
                "html_url": "https://example.invalid/c",
            },
            "repository": self.repository(),
            "sender": {"login": login, "type": "User"},
        }

    def run(self, step: str, env: action.ActionEnv, artifacts: Path | None = None, *, optimizer=None) -> int:
        """One step of the action; optimizer replaces the stand-in (same signature as Parts.optimizer)."""
        artifacts = artifacts or env.workspace.parent / "artifacts"
        parts = self.parts if optimizer is None else dataclasses.replace(self.parts, optimizer=optimizer)
        if step == "run":
            return action.run_all(env, artifacts, parts)
        if step == "triage":
            return action.triage(env, parts)
        if step == "optimize":
            return action.optimize(env, artifacts, parts)
        return action.publish(env, artifacts, parts)

    # reading results ---------------------------------------------------------------------------------
    def branch_file(self, branch: str, path: str) -> str | None:
        proc = subprocess.run(
            ["git", "-C", str(self.bare), "show", f"refs/heads/{branch}:{path}"],
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.stdout if proc.returncode == 0 else None

    def branch_sha(self, branch: str) -> str | None:
        proc = subprocess.run(
            ["git", "-C", str(self.bare), "rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
            capture_output=True,
            text=True,
            check=False,
        )
        return proc.stdout.strip() or None


def read_outputs(env: action.ActionEnv) -> dict[str, str]:
    """Parse $GITHUB_OUTPUT (name<<DELIMITER … DELIMITER)."""
    assert env.output is not None
    lines = env.output.read_text().splitlines()
    values: dict[str, str] = {}
    i = 0
    while i < len(lines):
        name, _, delimiter = lines[i].partition("<<")
        j = lines.index(delimiter, i + 1)
        values[name] = "\n".join(lines[i + 1 : j])
        i = j + 1
    return values
