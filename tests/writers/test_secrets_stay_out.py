"""Operator code never runs beside secrets: a canary operator, run by `foundry optimize` as a real subprocess
with secrets in its environment, writes down every environment it can read (its own os.environ and
/proc/self/environ, its parent's and its grandparent's /proc/<pid>/environ) at import and in forward. None of
them may hold a secret, and the LLM writer still reaches its endpoint with the key (through the broker)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from foundry.core.records import RunReport
from llm_server import FIXTURES, ScriptedLLM, kernel_reply

pytestmark = [pytest.mark.interp, pytest.mark.e2e, pytest.mark.slow]

SECRETS = {
    "OPENAI_API_KEY": "canary-openai-key-7f3a9c",
    "RAY_AUTH_TOKEN": "canary-ray-token-51d0e2",
    "GITHUB_TOKEN": "canary-github-token-a8b4c6",
    "SOME_SECRET": "canary-some-secret-90ee17",
}

CANARY = """
import json
import os
from pathlib import Path

DUMP = Path({dump!r})


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
    with DUMP.open("a") as fh:
        fh.write(json.dumps(seen) + "\\n")


_dump("module")
"""


def canary_operator(tmp_path: Path) -> tuple[Path, Path]:
    """scaled_relu (so the scripted kernels fit it) with the canary at import and in forward."""
    dump = tmp_path / "canary.jsonl"
    source = (FIXTURES / "scaled_relu.py").read_text()
    source = source.replace("from torch import nn\n", "from torch import nn\n" + CANARY.format(dump=str(dump)))
    source = source.replace("    def forward(self, x):\n", "    def forward(self, x):\n        _dump('forward')\n")
    operator = tmp_path / "canary_relu.py"
    operator.write_text(source)
    return operator, dump


def foundry(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full_env = dict(os.environ) | env
    root = Path(__file__).resolve().parents[2]
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root / "bot"), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "foundry", *args], capture_output=True, text=True, env=full_env, timeout=600
    )


def read_dumps(dump: Path) -> list[dict[str, Any]]:
    assert dump.exists(), "the canary never ran"
    return [json.loads(line) for line in dump.read_text().splitlines()]


def assert_no_secret_seen(dumps: list[dict[str, Any]]) -> None:
    assert {d["where"] for d in dumps} >= {"module", "forward"}, [d["where"] for d in dumps]
    for d in dumps:
        # the canary could read its own environment: an empty result would prove nothing
        assert "PATH=" in d["self"] and "PATH" in d["os.environ"]
        text = json.dumps(d)
        leaked = [name for name, value in SECRETS.items() if value in text or name in d["os.environ"]]
        assert not leaked, f"{d['where']} in pid {d['pid']} saw {leaked}"


def test_the_template_writer_run_shows_operator_code_no_secret(tmp_path):
    operator, dump = canary_operator(tmp_path)
    done = foundry(
        "optimize", str(operator), "--writer", "template", "--budget", "1", "--islands", "1", "--out",
        str(tmp_path / "out"), "--json", env=SECRETS | {"FOUNDRY_EXPERIENCE_DB": str(tmp_path / "x.duckdb")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert_no_secret_seen(read_dumps(dump))
    for value in SECRETS.values():
        assert value not in done.stdout + done.stderr


class KeyCheckingLLM(ScriptedLLM):
    """The scripted server, also keeping the Authorization header of every request."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.authorizations: list[str] = []

    def handler(self) -> Any:
        base = super().handler()
        llm = self

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:  # noqa: N802
                llm.authorizations.append(self.headers.get("authorization", ""))
                super().do_POST()

        return Handler


def test_the_llm_writer_reaches_its_endpoint_through_the_broker_and_operator_code_sees_no_key(tmp_path):
    operator, dump = canary_operator(tmp_path)
    with KeyCheckingLLM([kernel_reply("correct")]) as llm:
        env = SECRETS | {"OPENAI_BASE_URL": llm.base_url, "FOUNDRY_EXPERIENCE_DB": str(tmp_path / "x.duckdb")}
        done = foundry(
            "optimize", str(operator), "--writer", "llm", "--budget", "1", "--islands", "1", "--seed", "1",
            "--out", str(tmp_path / "out"), "--json", env=env,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert llm.authorizations == [f"Bearer {SECRETS['OPENAI_API_KEY']}"]
    assert "Write the first ModelNew" in llm.prompt(0) and "canary_relu" in llm.prompt(0)
    report = RunReport.model_validate_json(done.stdout)
    assert report.verified and report.evaluated == 1
    assert_no_secret_seen(read_dumps(dump))
