"""`foundry detect --base REV` with a revision the repository does not have is bad input: exit 2 naming it
(the bot's fallback to the first parent, for force pushes, is not for a user who named a revision)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from foundry.cli import main


def make_repo(git: str, path: Path) -> str:
    path.mkdir()

    def run(*args: str) -> str:
        env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t"}
        env["GIT_COMMITTER_EMAIL"] = "t@x"
        return subprocess.run([git, "-C", str(path), *args], check=True, capture_output=True, text=True, env=env).stdout

    run("init", "-q", "-b", "main")
    (path / "README.md").write_text("hi\n")
    run("add", "README.md")
    run("commit", "-q", "-m", "first")
    (path / "README.md").write_text("hello\n")
    run("commit", "-q", "-am", "second")
    return run("rev-parse", "HEAD~1").strip()


def test_unknown_base_exits_2_naming_it(git: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    first = make_repo(git, repo)
    assert main(["detect", "--repo", str(repo), "--base", "no-such-rev"]) == 2
    err = capsys.readouterr().err
    assert "foundry: error: --base 'no-such-rev' is not a commit of the repository" in err
    assert "no new or changed operators" not in err and "first parent" not in err
    assert main(["detect", "--repo", str(repo), "--base", first]) == 0
    assert "no new or changed operators" in capsys.readouterr().err


def test_detect_names_the_branch_a_push_of_head_would_use(git: str, tmp_path: Path, capsys) -> None:
    repo = tmp_path / "repo"
    make_repo(git, repo)
    (repo / "ops").mkdir()
    (repo / "ops" / "scale.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
        "        return x * 2\n\n\ndef get_inputs():\n    return [torch.randn(4)]\n\n\ndef get_init_inputs():\n"
        "    return []\n"
    )
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}
    subprocess.run([git, "-C", str(repo), "checkout", "-q", "-b", "feature/x"], check=True, env=env)
    subprocess.run([git, "-C", str(repo), "add", "ops"], check=True, env=env)
    subprocess.run([git, "-C", str(repo), "commit", "-q", "-m", "op"], check=True, env=env)
    assert main(["detect", "--repo", str(repo), "--base", "main"]) == 0
    err = capsys.readouterr().err
    assert "ops/scale.py" in err and "branch foundry/feature-x-" in err and "/ops-scale)" in err
    assert main(["detect", "--repo", str(repo), "--base", "main", "--head", "main"]) == 0
    assert "no new or changed operators" in capsys.readouterr().err
