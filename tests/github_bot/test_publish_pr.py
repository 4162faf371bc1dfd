"""Publishing decisions and the PR flow for measured (GPU) reports, against the local server and a
real bare remote. The reports are built from real records with timing values a GPU run would carry."""

from __future__ import annotations

import subprocess
from pathlib import Path

from foundry.core.records import Candidate, OperatorSpec, RunReport, Timing, Verdict
from foundry.github.api import GitHubApi
from foundry.github.config import parse_config
from foundry.github.gitrepo import GitRepo
from foundry.github.publish import branch_name, decide, kernel_path, pr_marker, pr_title, publish_operator
from gitfixtures import checkout

KERNEL = "import triton\n\n\n@triton.jit\ndef _k(x):\n    pass\n"


def report(*, eager: float | None = 0.03, cand: float | None = 0.0125, verified: bool = True) -> RunReport:
    measured = eager is not None
    timing = (
        Timing(measured=True, device="NVIDIA H200", trials=200, candidate_ms=cand, eager_ms=eager, compile_ms=0.02)
        if measured
        else Timing(measured=False, reason="no CUDA device")
    )
    best = Candidate(id="c1", source=KERNEL, writer="template", expert="fusion")
    verdict = Verdict(candidate_id="c1", verified=verified, policy="strict", device="NVIDIA H200", timing=timing)
    return RunReport(
        operator=OperatorSpec(path="ops/scale.py", name="ops-scale"),
        verified=verified,
        policy="strict",
        writer="template",
        device="NVIDIA H200" if measured else "cpu (Triton interpreter)",
        torch_version="2.11.0",
        triton_version="3.6.0",
        timing_measured=measured,
        best=best,
        best_verdict=verdict,
        budget=8,
        evaluated=8,
        failures={} if verified else {"mismatch": 8},
    )


def test_decide() -> None:
    config = parse_config(None)
    assert decide(report(), config) == (True, False, "verified, 2.40× over eager (as reported by the GPU job)")
    publish, _, why = decide(report(cand=0.0295), config)
    assert not publish and "below min_speedup 1.05×" in why
    assert decide(report(eager=None), config)[:2] == (True, True)
    strict = parse_config("pull_requests: {publish_unmeasured: false}")
    assert not decide(report(eager=None), strict)[0]
    publish, _, why = decide(report(verified=False), config)
    assert not publish and "no candidate passed verification" in why and "mismatch" in why


def test_names() -> None:
    assert kernel_path("ops/scale.py") == "ops/scale_foundry.py"
    assert kernel_path("ops/net.py::LayerNorm") == "ops/net_layer_norm_foundry.py"
    assert (
        pr_marker("ops/net.py::LayerNorm", "main")
        == "<!-- kernel-foundry:pull-request operator=ops-net-layernorm base=main -->"
    )
    assert pr_title("ops/scale.py", 2.4) == (
        "Kernel Foundry: ops/scale.py 2.40× faster than eager (as reported by the GPU job)"
    )


def test_two_classes_of_one_file_never_share_a_branch() -> None:
    names = {branch_name(f"ops/net.py::{cls}", "main") for cls in ("LayerNorm", "Gelu", "Model")}
    assert names == {"foundry/main/ops-net-layernorm", "foundry/main/ops-net-gelu", "foundry/main/ops-net"}
    assert branch_name("ops/net.py", "main") == branch_name("ops/net.py::Model", "main")
    assert branch_name("ops/net.py", "feature/x") != branch_name("ops/net.py", "feature-x")


def test_measured_report_opens_a_ready_pr(api: GitHubApi, fake, remote, tmp_path: Path) -> None:
    bare, dev = remote
    dev.commit({"ops/scale.py": "class Model: ...\n"})
    sha = dev.push()
    work = checkout(bare, tmp_path / "runner", sha)
    config = parse_config("pull_requests: {labels: [perf]}\noperators: {ops/scale.py: {labels: [hot]}}")
    outcome = publish_operator(
        api=api,
        git=GitRepo(work),
        ref="ops/scale.py",
        report=report(),
        kernel_source=KERNEL,
        head=sha,
        base_branch="main",
        config=config,
    )
    assert outcome.action == "created" and outcome.speedup == 2.4
    pull = fake.pulls[outcome.pr_number]
    assert pull["draft"] is False and "2.40×" in pull["title"]
    assert "**2.40×**" in pull["body"] and "0.0125 ms" in pull["body"]
    # torch.compile took 0.0200 ms against eager's 0.0300 and the kernel's 0.0125: never the inverse ratios
    assert "| torch.compile | 0.0200 ms | 1.50× | 1.00× |" in pull["body"]
    assert "| **Foundry (Triton)** | **0.0125 ms** | **2.40×** | **1.60×** |" in pull["body"]
    assert fake.issues[outcome.pr_number]["labels"] == ["perf", "hot"]
    shown = subprocess.run(
        ["git", "-C", str(bare), "log", "-1", "--format=%an%n%s", "refs/heads/foundry/main/ops-scale"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert shown == ["kernel-foundry[bot]", pr_title("ops/scale.py", 2.4)]


def test_refuses_a_branch_someone_else_opened(api: GitHubApi, fake, remote, tmp_path: Path) -> None:
    bare, dev = remote
    sha = dev.commit({"ops/scale.py": "class Model: ...\n"})
    dev.push()
    dev.push("foundry/main/ops-scale")
    number = fake.open_issue("human PR")
    fake.pulls[number] = {
        "number": number,
        "head": "foundry/main/ops-scale",
        "base": "main",
        "title": "mine",
        "body": "hand-made",
        "draft": False,
        "state": "open",
    }
    work = checkout(bare, tmp_path / "runner", sha)
    outcome = publish_operator(
        api=api,
        git=GitRepo(work),
        ref="ops/scale.py",
        report=report(),
        kernel_source=KERNEL,
        head=sha,
        base_branch="main",
        config=parse_config(None),
    )
    assert outcome.action == "failed" and "not made by Kernel Foundry" in outcome.reason
    assert fake.pulls[number]["body"] == "hand-made" and len(fake.pulls) == 1


def test_rejects_reports_for_another_operator_or_missing_files(api: GitHubApi, fake, remote, tmp_path: Path) -> None:
    bare, dev = remote
    sha = dev.commit({"ops/scale.py": "class Model: ...\n"})
    dev.push()
    work = GitRepo(checkout(bare, tmp_path / "runner", sha))
    common = dict(api=api, git=work, report=report(), head=sha, base_branch="main", config=parse_config(None))
    assert "is not a file" in publish_operator(ref="ops/missing.py", kernel_source=KERNEL, **common).reason
    assert (
        "not ops/scale.py::Other" in publish_operator(ref="ops/scale.py::Other", kernel_source=KERNEL, **common).reason
    )
    assert "empty or not source" in publish_operator(ref="ops/scale.py", kernel_source="  \n", **common).reason
    swapped = publish_operator(ref="ops/scale.py", kernel_source="import os\nos.system('x')\n", **common)
    assert "not the verified candidate" in swapped.reason
    assert fake.writes() == []
