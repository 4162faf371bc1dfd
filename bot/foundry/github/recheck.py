"""Publish's own correctness check of a kernel before any pull request: `foundry check` on the CPU (the
Triton interpreter at the operator's small shapes), in a child process.

The child imports the operator (repository code), so it starts from an allowlisted environment: no token
and no other secret reaches it, and it works in an export of the approved commit (`git archive`, no `.git`
whose config could hold credentials). Its verdict comes back as JSON on stdout and is validated here; the
artifact's claim that the kernel was verified is never what decides.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from foundry.core.records import Verdict
from foundry.github.gitrepo import GitRepo

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 15 * 60
WHERE = "on the CPU (Triton interpreter, the operator's small shapes)"
# what the child may inherit: nothing secret-looking, only what Python, git and compilers need to run
PASSED_ON = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV", "XDG_CACHE_HOME")


class Recheck(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    verified: bool
    reason: str  # a line for the summary: what passed, or why not


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """An allowlist: the interpreter on, no GPU, and no variable of the publish step (tokens) besides."""
    env = {k: environ[k] for k in PASSED_ON if k in environ}
    env.update({"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""})
    return env


def export_tree(git: GitRepo, commit: str, dest: Path) -> Path:
    """The files of commit under dest, without .git (the checkout's config may hold the push credentials)."""
    archive = dest / "tree.tar"
    with archive.open("wb") as fh:
        subprocess.run([git.exe, "-C", str(git.root), "archive", "--format=tar", commit], stdout=fh, check=True)
    tree = dest / "tree"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


def recheck(
    git: GitRepo,
    commit: str,
    ref: str,
    kernel_source: str,
    *,
    policy: str = "strict",
    environ: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    preexec: Callable[[], None] | None = None,
) -> Recheck:
    """`python -m foundry check REF KERNEL --json` in an export of commit: verified only when the child
    says so in a valid verdict for this kernel. preexec runs between fork and exec (the composition root
    drops the capabilities that read other processes there, so that even as root the child cannot read
    the publish step's environment)."""
    env = child_environment(os.environ if environ is None else environ)
    with tempfile.TemporaryDirectory(prefix="foundry-recheck-") as tmp:
        tree = export_tree(git, commit, Path(tmp))
        kernel = Path(tmp) / "kernel.py"
        kernel.write_text(kernel_source)
        cmd = [sys.executable, "-m", "foundry", "check", ref, str(kernel), "--policy", policy, "--json"]
        log.info("re-checking %s %s", ref, WHERE)
        try:
            proc = subprocess.run(
                cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout_s, preexec_fn=preexec
            )
        except subprocess.TimeoutExpired:
            return Recheck(verified=False, reason=f"publish's own check {WHERE} did not finish in {timeout_s:.0f} s")
    if proc.returncode not in (0, 1):
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1][:300]
        return Recheck(verified=False, reason=f"publish's own check {WHERE} could not run: {last}")
    try:
        verdict = Verdict.model_validate_json(proc.stdout)
    except ValidationError:
        return Recheck(verified=False, reason=f"publish's own check {WHERE} gave no verdict")
    if proc.returncode == 0 and verdict.verified:
        return Recheck(verified=True, reason=f"correctness re-checked by publish {WHERE}: passed")
    failure = verdict.failure.headline() if verdict.failure is not None else "rejected"
    return Recheck(verified=False, reason=f"publish's own check {WHERE} rejected the kernel: {failure}")
