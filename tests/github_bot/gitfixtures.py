"""Real git repositories for tests: a bare remote on disk and clones that commit and push to it."""

from __future__ import annotations

import subprocess
from pathlib import Path

ENV = {
    "GIT_AUTHOR_NAME": "Dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "Dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    import os

    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **ENV}, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


class Clone:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, files: dict[str, str | None]) -> None:
        for name, text in files.items():
            target = self.path / name
            if text is None:
                git(self.path, "rm", "-q", "--", name)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            git(self.path, "add", "--", name)

    def commit(self, files: dict[str, str | None], message: str = "change") -> str:
        self.write(files)
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return git(self.path, "rev-parse", "HEAD")

    def push(self, branch: str = "main", *, force: bool = False) -> str:
        git(self.path, "push", "-q", *(["--force"] if force else []), "origin", f"HEAD:refs/heads/{branch}")
        return self.head()


def make_remote(root: Path) -> tuple[Path, Clone]:
    """A bare repository (the 'GitHub' side) and a developer clone of it."""
    bare = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    dev = root / "dev"
    git(root, "clone", "-q", str(bare), str(dev))
    git(dev, "checkout", "-q", "-b", "main")
    return bare, Clone(dev)


def checkout(bare: Path, dest: Path, sha: str) -> Path:
    """What actions/checkout leaves: a clone at sha, origin pointing at the remote, full history."""
    git(dest.parent, "clone", "-q", "--no-checkout", str(bare), str(dest))
    git(dest, "fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*")
    git(dest, "checkout", "-q", "--detach", sha)
    return dest
