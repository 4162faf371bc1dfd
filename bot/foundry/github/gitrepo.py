"""Plain git, through argument lists (never a shell): reading revisions, and publishing a branch
with plumbing so that the working tree of the checkout is never touched."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from foundry.core.errors import FatalError

log = logging.getLogger(__name__)

ZERO_SHA = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
BOT_NAME = "kernel-foundry[bot]"
BOT_EMAIL = "kernel-foundry[bot]@users.noreply.github.com"


class GitError(FatalError):
    """A git command failed; the message carries git's own words."""


class GitRepo:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.exe = shutil.which("git")
        if self.exe is None:
            raise GitError("git is not installed on this runner")

    def run(self, *args: str, env: dict[str, str] | None = None, input: str | None = None) -> str:
        cmd = [self.exe, "-C", str(self.root), *args]
        full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, input=input, check=False)
        if proc.returncode != 0:
            raise GitError(f"git {' '.join(args[:3])} failed: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc.stdout

    def ok(self, *args: str) -> bool:
        cmd = [self.exe, "-C", str(self.root), *args]
        return subprocess.run(cmd, capture_output=True, check=False).returncode == 0

    # reading -------------------------------------------------------------------------------------
    def commit(self, rev: str) -> str | None:
        """The full sha of a commit, or None when the revision is not in this repository."""
        if not rev or rev == ZERO_SHA or rev.startswith("-"):
            return None
        if not self.ok("cat-file", "-e", f"{rev}^{{commit}}"):
            return None
        return self.run("rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}").strip()

    def first_parent(self, sha: str) -> str | None:
        return self.commit(f"{sha}^1") if self.ok("cat-file", "-e", f"{sha}^1") else None

    def show(self, rev: str, path: str) -> str | None:
        """A file's text at a revision, or None when it does not exist there (or is not text)."""
        cmd = [self.exe, "-C", str(self.root), "show", f"{rev}:{path}"]
        proc = subprocess.run(cmd, capture_output=True, check=False)
        if proc.returncode != 0:
            return None
        try:
            return proc.stdout.decode()
        except UnicodeDecodeError:
            return None

    def files(self, rev: str) -> list[str]:
        out = self.run("ls-tree", "-r", "--name-only", "-z", rev)
        return [p for p in out.split("\0") if p]

    def diff(self, base: str, head: str) -> list[tuple[str, str | None, str]]:
        """(status letter, old path or None, new path) for each changed file, renames detected."""
        out = self.run("diff", "--name-status", "-M", "-z", "--no-ext-diff", base, head, "--")
        fields = [f for f in out.split("\0") if f != ""]
        changes: list[tuple[str, str | None, str]] = []
        i = 0
        while i < len(fields):
            status = fields[i][0]
            if status in "RC":
                changes.append((status, fields[i + 1], fields[i + 2]))
                i += 3
            else:
                changes.append((status, None, fields[i + 1]))
                i += 2
        return changes

    def remote_branch(self, remote: str, branch: str) -> str | None:
        out = self.run("ls-remote", "--heads", remote, f"refs/heads/{branch}")
        for line in out.splitlines():
            sha, _, ref = line.partition("\t")
            if ref == f"refs/heads/{branch}":
                return sha
        return None

    def foreign_tip(self, sha: str) -> str | None:
        """None when the bot made commit sha (its author and committer identity, one parent: what
        commit_files writes); otherwise a short description of the commit that someone else made."""
        fields = self.run("show", "-s", "--format=%ae%x00%ce%x00%P%x00%h%x00%an", sha).rstrip("\n").split("\0")
        author, committer, parents, short, name = fields
        if author == BOT_EMAIL and committer == BOT_EMAIL and len(parents.split()) == 1:
            return None
        return f"{short} by {name}"

    def conflicts(self, base: str, branch: str) -> bool:
        """Whether merging branch into base would conflict (a merge in memory: no working tree, no index)."""
        cmd = [self.exe, "-C", str(self.root), "merge-tree", "--write-tree", "--no-messages", base, branch]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode not in (0, 1):
            raise GitError(f"git merge-tree failed: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc.returncode == 1

    # writing -------------------------------------------------------------------------------------
    def commit_files(self, parent: str, files: dict[str, bytes], message: str) -> str:
        """A commit on top of parent with files added or replaced, built in a private index."""
        with tempfile.TemporaryDirectory(prefix="foundry-index-") as tmp:
            env = {
                "GIT_INDEX_FILE": str(Path(tmp) / "index"),
                "GIT_AUTHOR_NAME": BOT_NAME,
                "GIT_AUTHOR_EMAIL": BOT_EMAIL,
                "GIT_COMMITTER_NAME": BOT_NAME,
                "GIT_COMMITTER_EMAIL": BOT_EMAIL,
            }
            self.run("read-tree", parent, env=env)
            for path, data in sorted(files.items()):
                blob_path = Path(tmp) / "blob"
                blob_path.write_bytes(data)
                blob = self.run("hash-object", "-w", "--", str(blob_path)).strip()
                self.run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = self.run("write-tree", env=env).strip()
            return self.run("commit-tree", tree, "-p", parent, "-F", "-", env=env, input=message).strip()

    def tree_of(self, rev: str) -> str:
        return self.run("rev-parse", f"{rev}^{{tree}}").strip()

    def fetch(self, remote: str, sha_or_ref: str) -> None:
        self.run("fetch", "--quiet", "--no-tags", remote, sha_or_ref)

    def push(self, remote: str, sha: str, branch: str, *, expect: str | None) -> None:
        """Point refs/heads/branch at sha, only if it still is where we saw it (expect; None: absent)."""
        lease = f"--force-with-lease=refs/heads/{branch}:{expect or ''}"
        self.run("push", "--quiet", "--no-verify", lease, remote, f"{sha}:refs/heads/{branch}")

    def delete_branch(self, remote: str, branch: str, *, expect: str) -> None:
        lease = f"--force-with-lease=refs/heads/{branch}:{expect}"
        self.run("push", "--quiet", "--no-verify", lease, remote, f":refs/heads/{branch}")
