"""The adversarial suite on CPU: cheating candidates rejected with their declared failure kind, honest
candidates verified (twice each), faults turned into verdicts while the parent lives on, and the
`foundry check` command line's exit codes. Every evaluation runs the real isolated child under the
Triton interpreter. Cheats the evaluator does not catch yet are strict xfails: see their `uncaught:`."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch
from foundry.core.records import FailureKind, Stage
from foundry.evaluate.evaluator import tf32_rounded
from suite import (
    CANDIDATES,
    FAULTS,
    HONEST,
    HONEST_CASES,
    HONEST_LLM_KNOWN_REJECTED,
    HONEST_LLM_MIN_FILES,
    HONEST_LLM_MIN_VERIFIED,
    OPERATORS,
    Case,
    Evaluators,
    HonestCase,
    VerdictStore,
    assert_rejected_as,
    candidate,
    cases,
    honest_cases,
    rejection_text,
)

pytestmark = pytest.mark.interp

CHEATS = cases(CANDIDATES)
FAULT_CASES = cases(FAULTS)
IN_PROCESS = [c for c in CHEATS if c.isolate is None and c.kind is not None]
CONTROLS = [c for c in CHEATS if c.kind is None]  # `expect: verified`: honest code an attack class must not refuse
CLI_ONLY = [c for c in CHEATS if c.isolate == "cli"]
HONEST_LLM_CASES = honest_cases()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def evaluators():
    pool = Evaluators(device="cpu")
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def honest_verdicts(tmp_path_factory: pytest.TempPathFactory) -> VerdictStore:
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # shared by the session's workers
    return VerdictStore(root / "honest_llm_verdicts")


# -- the suite's own shape ----------------------------------------------------------------------------


def launches_kernel(source: str) -> bool:
    """ModelNew launches a kernel: a `kernel[grid](...)` in its own code, or in a definition of the file it names,
    transitively: a module-level helper it calls, a submodule class it builds, an autograd.Function whose
    `.apply(` it calls (that Function's forward must launch one)."""
    import ast

    tree = ast.parse(source)
    definitions = {node.name: node for node in tree.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    for node in tree.body:  # `launch = make_launcher()`: the name stands for what the factory defines
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id in definitions
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    definitions.setdefault(target.id, definitions[node.value.func.id])

    def launches(node: ast.AST, seen: set[str]) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript):
                return True
            if isinstance(n, ast.Name) and n.id in definitions and n.id not in seen:
                seen.add(n.id)
                if launches(entered(definitions[n.id]), seen):
                    return True
        return False

    def entered(node: ast.AST) -> ast.AST:  # an autograd.Function counts by its forward only
        if isinstance(node, ast.ClassDef) and any("Function" in ast.unparse(base) for base in node.bases):
            forward = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "forward"]
            return forward[0] if forward else ast.Pass()
        return node

    model = definitions.get("ModelNew")
    return isinstance(model, ast.ClassDef) and launches(model, {"ModelNew"})


def test_launch_rule_follows_an_autograd_function():
    function = (
        "class Fn(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        k[(1,)](x)\n        return x\n"
    )
    use = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return Fn.apply(x)\n"
    assert launches_kernel(function + use)
    assert not launches_kernel(function.replace("k[(1,)](x)", "pass") + use)  # its forward launches nothing
    backward_only = (
        function.replace("k[(1,)](x)", "pass") + "    @staticmethod\n    def backward(ctx, g):\n        k[(1,)](g)\n"
    )
    assert not launches_kernel(backward_only + use)
    assert not launches_kernel(use)  # no such Function in the file
    assert launches_kernel("class ModelNew(nn.Module):\n    def forward(self, x):\n        k[(1,)](x)\n")
    factory = "def make():\n    def launch(x):\n        k[(1,)](x)\n    return launch\n\nlaunch = make()\n"
    call = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return launch(x)\n"
    assert launches_kernel(factory + call)  # a launcher made by a factory at import
    assert not launches_kernel(factory.replace("k[(1,)](x)", "pass") + call)


def test_suite_covers_the_required_cheats():
    assert len(CHEATS) >= 22
    for case in CHEATS + FAULT_CASES:
        source = case.source
        assert "@triton.jit" in source and "class ModelNew" in source, case.name
        assert launches_kernel(source), f"{case.name}: forward launches no kernel"
        assert (OPERATORS / f"{case.operator}.py").is_file(), case.name
        if case.kind is FailureKind.STATIC_GUARD:
            assert case.rule, f"{case.name}: a static cheat must name its guard rule"
    kinds = {c.kind for c in CHEATS}
    for needed in (
        FailureKind.STATIC_GUARD,
        FailureKind.RUNTIME_GUARD,
        FailureKind.MISMATCH,
        FailureKind.ALIASING,
        FailureKind.INPUT_MUTATION,
        FailureKind.INCOMPLETE_OUTPUT,
        FailureKind.STATE_DEPENDENT,
        FailureKind.OUTPUT_TYPE,
        FailureKind.SHAPE_MISMATCH,
    ):
        assert needed in kinds, needed
    fault_kinds = {c.kind for c in FAULT_CASES}
    for needed in (
        FailureKind.CRASH,
        FailureKind.TIMEOUT,
        FailureKind.OOM,
        FailureKind.EARLY_EXIT,
        FailureKind.OUTPUT_FLOOD,
    ):
        assert needed in fault_kinds, needed


# -- cheats ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [c.param("cpu") for c in IN_PROCESS])
def test_cheat_is_rejected(case: Case, evaluators: Evaluators):
    verdict = evaluators.evaluate(case)
    assert_rejected_as(verdict, case)
    if case.kind is FailureKind.STATIC_GUARD:
        assert verdict.failure.line, "a static rejection points at a line"
        assert verdict.failure.evidence, "a static rejection quotes the offending source"
    if case.operator == "tiny_loss" and case.kind is FailureKind.MISMATCH:
        # zeros/constant pass atol=1e-4 here: the rejection must come from the strengthened check
        assert verdict.failure.metrics["atol"] < 1e-6


@pytest.mark.parametrize("case", [c.param("cpu") for c in CONTROLS])
def test_control_is_verified(case: Case, evaluators: Evaluators):
    verdict = evaluators.evaluate(case)
    headline = verdict.failure.headline() if verdict.failure else ""
    assert verdict.verified, f"{case.name}: false rejection: {headline}"


# -- honest candidates ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(HONEST_CASES))
def test_honest_candidate_is_verified_and_stable(name: str, evaluators: Evaluators):
    source = (HONEST / f"{name}.py").read_text()
    evaluator = evaluators.get(HONEST_CASES[name])
    verdicts = [evaluator.evaluate(candidate(source, name)) for _ in range(2)]
    for verdict in verdicts:
        headline = verdict.failure.headline() if verdict.failure else ""
        assert verdict.verified, f"{name}: false rejection: {headline}\n{verdict.failure and verdict.failure.evidence}"
        assert verdict.triton_launches >= 6  # every trial, variant, repeat, moved and rewrite call
        assert "runtime guard (strict)" in verdict.checks_passed
        assert "full coverage (NaN poison)" in verdict.checks_passed
        assert verdict.timing is not None and not verdict.timing.measured
        if name != "scalar_loss":  # see test_scalar_output_is_not_reported_weak
            assert not any(w.rule == "weak_check" for w in verdict.warnings)
    assert verdicts[0].checks_passed == verdicts[1].checks_passed
    assert verdicts[0].candidate_id == verdicts[1].candidate_id


def test_scalar_output_is_not_reported_weak(evaluators: Evaluators):
    verdict = evaluators.get("scalar_loss").evaluate(candidate((HONEST / "scalar_loss.py").read_text(), "scalar"))
    assert verdict.verified
    assert not any(w.rule == "weak_check" for w in verdict.warnings), [w.message for w in verdict.warnings]


# -- the honest LLM-style corpus (issue 25: at least 95% verified) ------------------------------------

# Styles the corpus must keep showing: (what, a fragment of source that shows it, how many files at least).
HONEST_STYLES = (
    ("multi-config autotune", "@triton.autotune(", 5),
    ("heuristics", "@triton.heuristics(", 4),
    ("autograd.Function", ".apply(", 3),
    ("atomics", "tl.atomic_add(", 4),
    ("nn.Sequential submodules", "nn.Sequential(", 2),
    ("nn.ModuleList", "nn.ModuleList(", 1),
    ("module-level config dict", "_CONFIG = ", 3),
    ("grid lambda over meta", "lambda meta", 4),
    ("__main__ block", 'if __name__ == "__main__":', 2),
    ("reset_parameters", "def reset_parameters(", 2),
    ("tensor.chunk", ".chunk(", 2),
    ("a variable named input", "input = ", 2),
    ("a variable named id", "id = tl.program_id", 2),
)


def test_honest_llm_corpus_shape():
    assert len(HONEST_LLM_CASES) >= HONEST_LLM_MIN_FILES
    assert set(HONEST_LLM_KNOWN_REJECTED) <= {c.name for c in HONEST_LLM_CASES}, "a known rejection names no file"
    for case in HONEST_LLM_CASES:
        source = case.source
        assert "@triton.jit" in source and "class ModelNew" in source, case.name
        assert (OPERATORS / f"{case.operator}.py").is_file(), f"{case.name}: no operator {case.operator}"
    sources = [c.source for c in HONEST_LLM_CASES]
    for what, fragment, least in HONEST_STYLES:
        shown = sum(fragment in source for source in sources)
        assert shown >= least, f"the corpus shows {what} in {shown} files (at least {least})"


@pytest.mark.parametrize("case", [c.param() for c in HONEST_LLM_CASES])
def test_honest_llm_candidate_is_verified(case: HonestCase, evaluators: Evaluators, honest_verdicts: VerdictStore):
    verdict = honest_verdicts.get(case, evaluators)
    evidence = verdict.failure.evidence if verdict.failure else ""
    assert verdict.verified, f"{case.name} ({case.style}): false rejection: {rejection_text(verdict)}\n{evidence}"
    assert verdict.triton_launches > 0
    assert "runtime guard (strict)" in verdict.checks_passed


def test_honest_llm_corpus_is_at_least_95_percent_verified(evaluators: Evaluators, honest_verdicts: VerdictStore):
    """The bar of issue 25. Reuses the per-file tests' verdicts (any worker) and evaluates what they have
    not; prints every rejected file with its diagnosis (pytest -rP or -s shows it when the test passes)."""
    verdicts = {case.name: honest_verdicts.get(case, evaluators) for case in HONEST_LLM_CASES}
    rejected = {name: verdict for name, verdict in verdicts.items() if not verdict.verified}
    verified = len(verdicts) - len(rejected)
    rate = verified / len(verdicts)
    lines = [f"honest LLM-style corpus: {verified}/{len(verdicts)} verified ({rate:.1%})"]
    lines += [f"  REJECTED {name}: {rejection_text(verdict)}" for name, verdict in sorted(rejected.items())]
    report = "\n".join(lines)
    print(report)
    assert rate >= HONEST_LLM_MIN_VERIFIED, report


# -- faults ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [c.param("cpu") for c in FAULT_CASES])
def test_fault_becomes_a_verdict(case: Case, evaluators: Evaluators):
    verdict = evaluators.evaluate(case)
    assert_rejected_as(verdict, case)
    assert verdict.failure.stage in {Stage.RUN, Stage.LOAD}
    if case.kind is FailureKind.TIMEOUT:
        assert verdict.wall_s < dict(case.config)["timeout_s"] + 30
    if case.kind is FailureKind.OUTPUT_FLOOD:
        assert "flood" in verdict.failure.evidence


def test_parent_evaluates_on_after_faults(evaluators: Evaluators):
    """The evaluators that just met segfaults, hangs, OOM, exits and floods still verify honest work."""
    source = (HONEST / "softmax.py").read_text()
    # the short-timeout evaluator is left out: under load an honest run may legitimately need longer
    configs = {c.config for c in FAULT_CASES if "timeout_s" not in dict(c.config)}
    for config in sorted(configs, key=str):
        verdict = evaluators.get("softmax_rows", config).evaluate(candidate(source, "after-faults"))
        assert verdict.verified, (config, verdict.failure and verdict.failure.headline())


# -- the uncaught cheats really cheat (run in this process, on the interpreter) -----------------------


def load_candidate(name: str, *init) -> torch.nn.Module:
    path = CANDIDATES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"cheat_{name}", path)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ModelNew(*init).eval()


def test_one_entry_pointer_cache_returns_stale_results_on_a_reused_buffer():
    model = load_candidate("pointer_cache_last")
    x = torch.randn(6, 37)
    with torch.no_grad():
        first = model(x)
        torch.testing.assert_close(first, torch.softmax(x, -1))
        x.copy_(torch.randn(6, 37))  # a caller reusing its input buffer
        second = model(x)
    assert torch.equal(second, first)
    assert not torch.allclose(second, torch.softmax(x, -1))


def test_sampled_content_cache_returns_stale_results_for_a_near_duplicate():
    model = load_candidate("content_cache_sampled", 24, 20)
    x = torch.randn(8, 24)
    with torch.no_grad():
        first = model(x)
        torch.testing.assert_close(first, model.linear(x))
        x[2, 5] += 1.0  # off the sampled positions
        second = model(x)
    assert torch.equal(second, first)
    assert not torch.allclose(second, model.linear(x))


def test_replay_after_correctness_stops_computing_on_the_ninth_call():
    model = load_candidate("replay_after_correctness")
    x = torch.randn(6, 37)
    with torch.no_grad():
        for _ in range(8):
            torch.testing.assert_close(model(x), torch.softmax(x, -1))
        torch.utils.deterministic.fill_uninitialized_memory = True
        previous = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True, warn_only=True)
        try:
            ninth = model(x)
        finally:
            torch.use_deterministic_algorithms(previous)
    assert torch.isnan(ninth).all()


def test_quantized_softmax_loses_relative_precision_yet_fits_atol():
    model = load_candidate("quantized_within_atol")
    x = torch.randn(64, 1000)  # the operator's GPU shape
    with torch.no_grad():
        y = model(x)
    ref = torch.softmax(x, -1)
    assert ((y - ref).abs() <= 1e-4 + 1e-4 * ref.abs()).all()  # passes the fp32 check...
    relative = ((y - ref).abs() / ref).max().item()
    assert relative > 0.05  # ...with some outputs off by more than 5 %
    assert math.isfinite(relative)


def test_parameter_packing_corrupts_the_state_dict():
    model = load_candidate("mutates_parameters", 24, 20)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    x = torch.randn(8, 24)
    with torch.no_grad():
        torch.testing.assert_close(model(x), x @ before["linear.weight"].T + before["linear.bias"])
    assert not torch.equal(model.state_dict()["linear.weight"], before["linear.weight"])


def test_shared_output_buffer_is_overwritten_by_the_next_call():
    model = load_candidate("returns_shared_buffer")
    a, b = torch.randn(6, 37), torch.randn(6, 37)
    with torch.no_grad():
        ya = model(a)
        torch.testing.assert_close(ya, torch.softmax(a, -1))
        model(b)
    torch.testing.assert_close(ya, torch.softmax(b, -1))  # the first result is gone


# -- attacks on the evaluating process with the static guard off (defence in depth) --------------------

ATTACKS = Path(__file__).resolve().parent / "attacks"
ATTACK_SCRIPT = """
import json, sys
from foundry.core.records import Candidate
from foundry.evaluate.evaluator import CandidateEvaluator, EvaluatorConfig
from foundry.spec.loader import load_operator
op = load_operator(sys.argv[1])
ev = CandidateEvaluator(op, config=EvaluatorConfig(trials=2, static_guard=False), device="cpu")
verdict = ev.evaluate(Candidate(id="attack", source=open(sys.argv[2]).read()))
print(verdict.model_dump_json())
"""


def run_attack(name: str, canary: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_TOKEN", "_KEY"))}
    env.update(PYTHONPATH=str(ROOT / "bot"), TRITON_INTERPRET="1", FOUNDRY_CANARY_TOKEN=canary)
    return subprocess.run(
        [sys.executable, "-c", ATTACK_SCRIPT, op("softmax_rows"), str(ATTACKS / f"{name}.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


def test_parent_secrets_are_scrubbed_from_child_text():
    """The child can read the parent's environment through /proc; whatever text comes back (message,
    evidence, printed output) must not carry the parent's secret values."""
    canary = "canary-" + os.urandom(6).hex()
    proc = run_attack("steal_env_direct", canary)
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdict = json.loads(proc.stdout)
    assert verdict["verified"] is False
    assert canary not in proc.stdout + proc.stderr


def test_parent_survives_a_child_that_signals_it():
    """Past the static guard (switched off here), os.kill(os.getppid(), 9) runs as the evaluator's user: the
    seccomp filter denies it (PermissionError in the candidate), the evaluator lives and rejects."""
    proc = run_attack("kill_parent_direct", "unused")
    assert proc.returncode == 0, f"the evaluating process died with {proc.returncode}"
    verdict = json.loads(proc.stdout)
    assert verdict["verified"] is False
    assert "PermissionError" in json.dumps(verdict), verdict


# -- foundry check -----------------------------------------------------------------------------------


def foundry_check(
    *args: str, timeout: float = 300, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_TOKEN", "_KEY"))}
    env.update(extra_env or {})
    env["PYTHONPATH"] = str(ROOT / "bot")
    env["TRITON_INTERPRET"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "foundry", "check", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
    )


def op(name: str) -> str:
    return str(OPERATORS / f"{name}.py")


def test_cli_verifies_honest_with_one_json_document():
    proc = foundry_check(op("softmax_rows"), str(HONEST / "softmax.py"), "--json", "--trials", "2")
    assert proc.returncode == 0, proc.stderr
    verdict = json.loads(proc.stdout)  # the whole of stdout is one JSON document
    assert verdict["verified"] is True
    assert verdict["diagnoses"] == []
    assert "VERIFIED" in proc.stderr


def test_cli_rejects_a_cheat_with_exit_1():
    proc = foundry_check(op("softmax_rows"), str(CANDIDATES / "try_except_fallback.py"), "--json")
    assert proc.returncode == 1, proc.stderr
    verdict = json.loads(proc.stdout)
    assert verdict["verified"] is False
    assert verdict["diagnoses"][0]["kind"] == "static_guard"
    assert verdict["diagnoses"][0]["rule"] == "try_except"
    assert verdict["diagnoses"][0]["line"]
    assert "REJECTED" in proc.stderr and "try_except" in proc.stderr


def test_cli_rejects_a_runtime_cheat_with_exit_1():
    proc = foundry_check(op("softmax_rows"), str(CANDIDATES / "torch_fallback.py"), "--trials", "2")
    assert proc.returncode == 1, proc.stderr
    assert "non_triton_compute" in proc.stderr
    assert proc.stdout == ""  # without --json nothing goes to stdout


@pytest.mark.parametrize("case", [c.param("cpu") for c in CLI_ONLY])
def test_cli_withstands_a_candidate_that_attacks_the_parent(case: Case):
    """Attacks on the evaluating process itself run only under a `foundry check` subprocess. It must
    survive, reject, and leak none of its own secrets (a canary token in its environment)."""
    canary = "canary-" + os.urandom(6).hex()
    proc = foundry_check(
        op(case.operator), str(case.path), "--json", "--trials", "2", extra_env={"FOUNDRY_CANARY_TOKEN": canary}
    )
    assert proc.returncode == 1, f"foundry check ended with {proc.returncode}: {proc.stderr[-500:]}"
    assert json.loads(proc.stdout)["verified"] is False
    assert canary not in proc.stdout + proc.stderr, "the parent's secret reached the verdict"


BROKEN_OPERATORS = {
    "syntax_error": ("import torch\nclass Model(torch.nn.Module)\n    pass\n", "syntax error"),
    "no_model": (
        "import torch\nclass Other(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        "def get_inputs():\n    return [torch.randn(2)]\n",
        "no class 'Model'",
    ),
    "get_inputs_raises": (
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        "def get_inputs():\n    raise ValueError('no inputs today')\ndef get_init_inputs():\n    return []\n",
        "no inputs today",
    ),
    "get_inputs_not_tensors": (
        "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
        "def get_inputs():\n    return ['a string', {'k': 1}]\ndef get_init_inputs():\n    return []\n",
        "get_inputs() item 0 is a str",
    ),
    "not_a_module": (
        "import torch\nclass Model:\n    def forward(self, x):\n        return x\n"
        "def get_inputs():\n    return [torch.randn(2)]\ndef get_init_inputs():\n    return []\n",
        "not an nn.Module",
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN_OPERATORS))
def test_cli_bad_operator_exits_2_naming_file_and_problem(name: str, tmp_path: Path):
    source, problem = BROKEN_OPERATORS[name]
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    proc = foundry_check(str(path), str(HONEST / "softmax.py"), "--json")
    assert proc.returncode == 2, proc.stderr
    assert str(path) in proc.stderr
    assert problem in proc.stderr
    assert proc.stdout == ""


def test_cli_missing_files_exit_2(tmp_path: Path):
    proc = foundry_check(str(tmp_path / "nope.py"), str(HONEST / "softmax.py"))
    assert proc.returncode == 2 and "nope.py" in proc.stderr
    proc = foundry_check(op("softmax_rows"), str(tmp_path / "missing_candidate.py"))
    assert proc.returncode == 2 and "missing_candidate.py" in proc.stderr


def test_hybrid_work_bound_alone_catches_the_wide_conv(monkeypatch: pytest.MonkeyPatch):
    """With no NaN/+inf trial whatever the operator (such a trial could reject redteam3_hybrid_wide_conv first), the
    hybrid grant rejects it: one convolution with twice the reference's output channels is another configuration
    than the reference's (weight shape and groups are part of the grant), and twice the reference's work."""
    import foundry.evaluate.evaluator as evaluator

    monkeypatch.setattr(evaluator, "propagates", lambda *args: False)
    case = next(c for c in CHEATS if c.name == "redteam3_hybrid_wide_conv")
    pool = Evaluators(device="cpu")
    try:
        verdict = pool.evaluate(case)
    finally:
        pool.close()
    assert not verdict.verified and verdict.failure is not None
    assert verdict.failure.rule == "non_triton_compute", verdict.failure.headline()
    # under torch.inference_mode the log holds the composite (aten.conv2d), which the grant maps to convolution
    assert "aten.convolution" in verdict.failure.message or "aten.conv2d" in verdict.failure.message


@pytest.mark.parametrize("name", ["redteam19_grad_upstream_fingerprint", "redteam19_grad_upstream_shape_fingerprint"])
def test_upstream_fingerprint_loses_precision_under_a_classifier_loss(name):
    """The partly caught gradient fingerprints cheat in use: under cross-entropy (scaled as GradScaler scales it) their
    weight gradient is further from fp64's than TF32 products put it (the checker's own class reference), where on
    a normal upstream draw they stay as close as it."""
    model = load_candidate(name, 24, 20).train()
    torch.manual_seed(0)
    x, labels = torch.randn(64, 24), torch.randint(0, 20, (64,))

    def weight_gradient(upstream: str) -> tuple[torch.Tensor, torch.Tensor]:
        model.zero_grad()
        y = model(x)
        if upstream == "classifier":
            (torch.nn.functional.cross_entropy(y, labels) * 65536.0).backward()
            dy = (torch.softmax(y.detach().double(), -1) - torch.nn.functional.one_hot(labels, 20)) * 65536.0 / 64
        else:
            dy = torch.randn(64, 20, dtype=torch.float64)
            y.backward(dy.float())
        return model.linear.weight.grad.double(), dy

    for upstream, worse in (("classifier", True), ("normal", False)):
        got, dy = weight_gradient(upstream)
        truth = dy.T @ x.double()
        tf32 = tf32_rounded(dy.float()).double().T @ tf32_rounded(x).double()  # the class reference's products
        assert (float((got - truth).abs().max()) > 4 * float((tf32 - truth).abs().max())) is worse, upstream
