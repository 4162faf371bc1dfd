"""The sandbox around a candidate's process as a whole (evaluate/sandbox.py, seccomp.py's second stage,
landlock.py's private Triton cache), probed by a candidate that runs through the real evaluator with the static
guard off, in each layer this machine has: no socket of any family, no metadata change outside (or inside)
its job, no capability, no secret of the evaluator or of another process readable, a Triton cache of its own,
and no worker left once `foundry check` is killed. Each probe is also run where the layer is missing, so that
the test can tell (the controls)."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from foundry.core.records import Candidate
from foundry.evaluate import isolation, landlock, sandbox, seccomp
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

pytestmark = [
    pytest.mark.interp,
    pytest.mark.skipif(not seccomp.available() or landlock.abi() < 1, reason="needs seccomp and Landlock"),
]

ROOT = Path(__file__).resolve().parents[2]
CHEATS = ROOT / "tests" / "cheats"
CANARIES = {
    "OPENAI_API_KEY": "sk-canary-openai-7f3a91",
    "GITHUB_TOKEN": "ghp_canary_github_52be0c",
    "RAY_AUTH_TOKEN": "canary-ray-auth-9d1e44",
    "AWS_SECRET_ACCESS_KEY": "canary/aws/secret+6c2f",
    "FOO_PASSWORD": "canary-password-0a7b3e",
    "SOMETHING_CREDENTIALS": "canary-credentials-e81d",
}
LAYERS = ["none", pytest.param("bwrap", marks=pytest.mark.skipif(sandbox.namespaces() != "bwrap", reason="no bwrap"))]

# Every attack at import, each recorded (never raised), then the loot: printed, written to the job directory
# and raised in encoded forms. OUTSIDE, SHARED_CACHE, DECOY and PARENT come from a header the test writes.
PROBE = r"""
import base64, glob, json, os, socket, sys

facts = {"pid": os.getpid()}


def attempt(name, fn):
    try:
        fn()
        facts[name] = "ok"
    except OSError as exc:
        facts[name] = type(exc).__name__


attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", 9)))
attempt("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
attempt("tcp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
attempt("unix path", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(OUTSIDE + ".sock"))
attempt("unix abstract", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind("\0foundry-probe"))
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
attempt("socketpair", lambda: socket.socketpair())
attempt("chmod", lambda: os.chmod(OUTSIDE, 0o777))
attempt("chmod in job", lambda: os.chmod("candidate.py", 0o777))
attempt("utime", lambda: os.utime(OUTSIDE, (0, 0)))
attempt("chown", lambda: os.chown(OUTSIDE, 1234, 1234))
attempt("setxattr", lambda: os.setxattr(OUTSIDE, "user.foundry", b"x"))
attempt("plant in shared cache", lambda: open(os.path.join(SHARED_CACHE, "planted.json"), "w").write("{}"))
facts["triton cache"] = os.environ.get("TRITON_CACHE_DIR", "")
attempt("write own cache", lambda: open(os.path.join(facts["triton cache"], "mine.json"), "w").write("{}"))
facts["caps"] = {
    line.split(":")[0]: int(line.split(":")[1], 16)
    for line in open("/proc/self/status")
    if line.startswith("Cap")
}
facts["visible pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
loot = []
for name, path in [("parent", f"/proc/{os.getppid()}/environ"), ("evaluator", f"/proc/{PARENT}/environ"),
                   ("init", "/proc/1/environ"), ("decoy", f"/proc/{DECOYS[0]}/environ"),
                   ("capless decoy", f"/proc/{DECOYS[1]}/environ"), ("self", "/proc/self/environ")]:
    try:
        loot.append(open(path, "rb").read().decode(errors="replace"))
        facts[name + " environ"] = "ok"
    except OSError as exc:
        facts[name + " environ"] = type(exc).__name__
for path in glob.glob("/proc/[0-9]*/environ"):
    try:
        loot.append(open(path, "rb").read().decode(errors="replace"))
    except OSError:
        pass
loot.append(json.dumps(dict(os.environ)))
text = "\n".join(loot)
print(text)
print(text, file=sys.stderr)
open("loot.txt", "w").write(text)
open("facts.json", "w").write(json.dumps(facts))
raise RuntimeError(
    base64.b64encode(text.encode()).decode()[-200:] + text.encode().hex()[-200:] + text[::-1][:100]
)
"""


def encodings(value: str) -> list[str]:
    raw = value.encode()
    return [value, value[::-1], base64.b64encode(raw).decode()[:-4], raw.hex()]


def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layer: str, *, file_sandbox: bool = True):
    """Evaluate PROBE in `layer` with canary secrets in the evaluator's environment and in two decoy processes of
    the same user (the runner's shell): one with this process's capabilities (root in CI) and one without any
    (a runner that is not root). Returns the facts, the verdict's text, the kept job dir, the file outside, the
    shared cache, the decoys' pids and the layers `describe` names."""
    monkeypatch.setenv(sandbox.ENV, layer)
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    outside = tmp_path / "outside.txt"
    outside.write_text("kept")
    os.chmod(outside, 0o640)
    os.utime(outside, (1_000_000, 1_000_000))
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    monkeypatch.setenv("TRITON_CACHE_DIR", str(shared))  # what the child would have inherited before
    decoys = [
        subprocess.Popen(["sleep", "60"]),
        subprocess.Popen(["sleep", "60"], preexec_fn=sandbox.drop_capabilities),  # noqa: PLW1509
    ]
    pids = [d.pid for d in decoys]
    header = f"OUTSIDE = {str(outside)!r}\nSHARED_CACHE = {str(shared)!r}\nDECOYS = {pids}\nPARENT = {os.getpid()}\n"
    source = header + PROBE + (CHEATS / "honest" / "softmax.py").read_text()
    workdir = tmp_path / "jobs"
    workdir.mkdir()
    config = EvaluatorConfig(trials=2, static_guard=False, keep_jobs=True, workdir=workdir, file_sandbox=file_sandbox)
    operator = load_operator(str(CHEATS / "operators" / "softmax_rows.py"))
    evaluator = CandidateEvaluator(operator, config=config, device="cpu")
    try:
        verdict = evaluator.evaluate(Candidate(id="probe", source=source))
    finally:
        evaluator.close()
        for decoy in decoys:
            decoy.kill()
            decoy.wait()
    described = isolation.describe(evaluator.env)
    (job,) = [p for p in workdir.iterdir() if (p / "facts.json").exists()]
    facts = json.loads((job / "facts.json").read_text())
    assert not verdict.verified
    return facts, verdict.model_dump_json(), job, outside, shared, [d.pid for d in decoys], described


def leaked(texts: list[str]) -> list[str]:
    return [name for name, value in CANARIES.items() for form in encodings(value) if any(form in t for t in texts)]


@pytest.mark.parametrize("layer", LAYERS)
def test_a_candidate_in_the_sandbox_reaches_nothing_outside(tmp_path, monkeypatch, layer):
    facts, verdict, job, outside, shared, decoys, described = probe(tmp_path, monkeypatch, layer)
    for name in ("udp", "tcp", "tcp6", "unix path", "unix abstract", "netlink", "packet", "socketpair"):
        assert facts[name] == "PermissionError", (name, facts[name])
    for name in ("chmod", "chmod in job", "utime", "chown", "setxattr"):
        assert facts[name] == "PermissionError", (name, facts[name])
    assert (outside.stat().st_mode & 0o777, outside.stat().st_mtime) == (0o640, 1_000_000)
    assert facts["plant in shared cache"] == "PermissionError" and not (shared / "planted.json").exists()
    assert facts["triton cache"] == str(job / "triton-cache") and facts["write own cache"] == "ok"
    assert all(value == 0 for value in facts["caps"].values()), facts["caps"]
    if layer == "bwrap":  # a pid namespace of its own: the evaluator and the decoy do not exist for it
        assert not {os.getpid(), *decoys} & set(facts["visible pids"])
        assert len(facts["visible pids"]) <= 4, facts["visible pids"]
        assert facts["evaluator environ"] == facts["decoy environ"] == "FileNotFoundError"
    else:
        # the evaluator is non-dumpable and the candidate has no CAP_SYS_PTRACE; a process with capabilities the
        # candidate lacks is out of its reach (commoncap); one without any, of the same user, is out of its
        # Landlock domain
        assert facts["parent environ"] == facts["evaluator environ"] == "PermissionError"
        assert facts["decoy environ"] == facts["capless decoy environ"] == "PermissionError"
    # no canary anywhere the candidate could put it: the verdict (its message, evidence and output tail), the
    # job directory (its loot file included)
    texts = [verdict] + [p.read_text(errors="replace") for p in job.rglob("*") if p.is_file() and p.suffix != ".pt"]
    assert leaked(texts) == []
    assert ("bwrap namespaces" if layer == "bwrap" else "no namespaces") in described


def test_the_sandbox_is_named_as_the_run_had_it(monkeypatch):
    env = {landlock.ENV: "1"}
    monkeypatch.setenv(sandbox.ENV, "none")
    assert isolation.describe(env) == (
        f"sandbox: no namespaces + seccomp (signals, ptrace, sockets, metadata) + Landlock ABI {landlock.abi()}"
        " (writes, reads) + no capabilities"
    )
    assert "Landlock" not in isolation.describe({})
    if sandbox.namespaces() != "none":
        monkeypatch.setenv(sandbox.ENV, "bwrap")
        assert isolation.describe(env).startswith("sandbox: bwrap namespaces (user, pid, mount, net, ipc) + seccomp")


def test_the_probe_finds_the_canary_where_the_layers_are_off(tmp_path, monkeypatch):
    """The control: without namespaces and without Landlock, a dumpable process of the same user with no more
    capabilities than the candidate (a runner's shell that is not root) is readable, and the probe finds its
    canaries; so the test above could fail."""
    facts, verdict, job, *_ = probe(tmp_path, monkeypatch, "none", file_sandbox=False)
    assert facts["capless decoy environ"] == "ok" and facts["evaluator environ"] == "PermissionError"
    assert leaked([(job / "loot.txt").read_text()]) != []


def test_the_filter_stages_tell_apart_with_and_without_the_seal(tmp_path):
    """The control of the socket and metadata rules: the same calls succeed in a process that is not sealed."""
    code = (
        "import os, socket, sys\nsys.path.insert(0, sys.argv[2])\nfrom foundry.evaluate import seccomp\n"
        "if sys.argv[3] == 'sealed': seccomp.seal()\n"
        "out = []\n"
        "for fn in (lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), lambda: os.chmod(sys.argv[1], 0o600)):\n"
        "    try:\n        fn(); out.append('ok')\n    except PermissionError:\n        out.append('denied')\n"
        "print(' '.join(out))\n"
    )
    target = tmp_path / "f"
    target.write_text("x")
    runs = {
        how: subprocess.run(
            [sys.executable, "-c", code, str(target), str(ROOT / "bot"), how], capture_output=True, text=True
        ).stdout.strip()
        for how in ("sealed", "open")
    }
    assert runs == {"sealed": "denied denied", "open": "ok ok"}


def test_a_kernel_compiles_for_sm90_inside_the_sandbox(tmp_path):
    """Triton's compiler (and its ptxas and cuobjdump) needs none of what the seal denies."""
    code = (
        "import sys\nsys.path.insert(0, sys.argv[2])\nfrom pathlib import Path\nfrom foundry.evaluate import landlock\n"
        "landlock.confine(Path(sys.argv[1]))\n"
        "import triton, triton.language as tl\nfrom foundry.evaluate.static_compile import compile_facts\n"
        "@triton.jit\ndef _add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n"
        "print(compile_facts(_add_kernel, ('tensor:torch.float32', 'tensor:torch.float32', 64), {'BLOCK': 64}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    script = tmp_path / "compile_probe.py"  # Triton reads a kernel's source from its file
    script.write_text(code)
    job = tmp_path / "job"
    job.mkdir()
    done = subprocess.run(
        [sys.executable, str(script), str(job), str(ROOT / "bot")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "'registers': " in done.stdout and "sm_90" in done.stdout
    assert list((job / "triton-cache").iterdir())  # compiled into the job's own cache


SPINNER = (
    (CHEATS / "honest" / "softmax.py")
    .read_text()
    .replace(
        "    def forward(self, x):\n",
        "    def forward(self, x):\n        while x.numel() > 0:\n            x = x + 0\n",
    )
)


# A candidate that starts a spinning process of its own (not the evaluator's child: no parent-death signal
# reaches it), then spins itself. The static guard would refuse it: run through an evaluator with it off.
GRANDCHILD = SPINNER.replace(
    "        while x.numel() > 0:\n",
    "        import subprocess, sys\n"
    "        subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
    "        while x.numel() > 0:\n",
)
DRIVER = """
import sys
from foundry.core.records import Candidate
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator

operator = load_operator(sys.argv[1])
evaluator = CandidateEvaluator(
    operator, config=EvaluatorConfig(trials=2, static_guard=False, process_sandbox=False), device="cpu"
)
evaluator.evaluate(Candidate(id="spinner", source=open(sys.argv[2]).read()))
"""


def kill_and_count(tmp_path: Path, layer: str, source: str, how: str) -> list[int]:
    """Start an evaluator of `source` (`foundry check`, or DRIVER), wait until `how` many marked processes
    besides it run (its worker and whatever the candidate started), SIGKILL it, and return the marked
    processes left 3 seconds later."""
    candidate = tmp_path / "spinner.py"
    candidate.write_text(source)
    marker = f"TRITON_FOUNDRY_TEST_MARK=spin-{os.urandom(4).hex()}"  # passes the child allowlist (TRITON_*)
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_TOKEN", "_KEY"))}
    env.update({"PYTHONPATH": str(ROOT / "bot"), "TRITON_INTERPRET": "1", sandbox.ENV: layer})
    env[marker.split("=")[0]] = marker.split("=")[1]
    operator = str(CHEATS / "operators" / "softmax_rows.py")
    if how == "check":
        argv = [sys.executable, "-m", "foundry", "check", operator, str(candidate), "--json", "--trials", "2"]
    else:
        argv = [sys.executable, "-c", DRIVER, operator, str(candidate)]
    evaluator = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def marked(needle: bytes = b"") -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit() and int(entry.name) != evaluator.pid:
                try:
                    if (
                        marker.encode() in (entry / "environ").read_bytes()
                        and needle in (entry / "cmdline").read_bytes()
                    ):
                        found.append(int(entry.name))
                except OSError:
                    pass
        return found

    needle = b"foundry.evaluate.worker" if how == "check" else b"while True"
    try:
        deadline = time.monotonic() + 120
        while not marked(needle):
            assert time.monotonic() < deadline and evaluator.poll() is None, "the candidate never started"
            time.sleep(0.2)
        time.sleep(1.0)  # the candidate is spinning now
        evaluator.send_signal(signal.SIGKILL)
        evaluator.wait()
        deadline = time.monotonic() + 3
        while marked() and time.monotonic() < deadline:
            time.sleep(0.1)
        return marked()
    finally:
        evaluator.kill()
        for pid in marked():
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("layer", LAYERS)
def test_no_worker_outlives_a_killed_foundry_check(tmp_path, layer):
    """SIGKILL `foundry check` while its candidate spins: its worker (and under bwrap the namespace) dies too."""
    assert kill_and_count(tmp_path, layer, SPINNER, "check") == []


@pytest.mark.parametrize("layer", LAYERS)
def test_nothing_a_candidate_started_outlives_a_killed_evaluator(tmp_path, layer):
    """The same with a process the candidate started (the reaper kills the worker's process group; under bwrap
    the pid namespace ends with its first process)."""
    assert kill_and_count(tmp_path, layer, GRANDCHILD, "driver") == []


@pytest.mark.skipif(sandbox.namespaces() != "bwrap", reason="no bwrap")
def test_credential_stores_in_the_evaluators_home_are_hidden_under_bwrap(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(CANARIES["AWS_SECRET_ACCESS_KEY"])
    (home / ".netrc").write_text(CANARIES["GITHUB_TOKEN"])
    (home / "notes.txt").write_text("readable")
    monkeypatch.setenv("HOME", str(home))
    reader = "import sys\nfor p in sys.argv[1:]:\n    try:\n        print(open(p).read())\n    except OSError as e:\n"
    reader += "        print(type(e).__name__)\n"
    paths = [str(home / ".aws" / "credentials"), str(home / ".netrc"), str(home / "notes.txt")]
    seen = subprocess.run(
        sandbox.command("bwrap", [sys.executable, "-c", reader, *paths]), capture_output=True, text=True, timeout=60
    ).stdout.split("\n")
    assert seen[0] == "FileNotFoundError" and seen[1] in {"", "PermissionError"} and seen[2] == "readable", seen
    assert leaked(seen) == []
