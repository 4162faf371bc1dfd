"""The adversarial suite on CUDA: the CPU suite's cheats, honest candidates and faults, plus the
GPU-only cheats against the timing layer (tests/cheats/candidates_gpu/). Skipped without CUDA.

On the lent H200 machine (torch 2.11, triton 3.6, Python 3.12) pydantic is missing; the wheels in the
git-ignored .whl/ folder plus typing_extensions>=4.16 install it offline:
    pip install --no-index --find-links .whl --find-links DIR_WITH_TYPING_EXTENSIONS pydantic
Run: python -m pytest -q tests/gpu/test_cheats_gpu.py (about 60 evaluations; split with -k if a
command is limited to 10 minutes: "honest or gpu_only or patching", "cheat_is_rejected", "fault")."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cheats"))

from foundry.core.records import FailureKind  # noqa: E402
from suite import (  # noqa: E402
    CANDIDATES,
    FAULTS,
    GPU_CANDIDATES,
    HONEST,
    HONEST_CASES,
    Case,
    Evaluators,
    assert_rejected_as,
    candidate,
    cases,
    honest_cases,
    rejection_text,
)

pytestmark = pytest.mark.gpu

CHEATS = [c for c in cases(CANDIDATES) if c.isolate is None and c.kind is not None]
CONTROLS = [c for c in cases(CANDIDATES) if c.isolate is None and c.kind is None]  # `expect: verified`
FAULT_CASES = cases(FAULTS)
GPU_CASES = cases(GPU_CANDIDATES)
GPU_CHEATS = [c for c in GPU_CASES if c.kind is not None]
GPU_CONTROLS = [c for c in GPU_CASES if c.kind is None]
HONEST_LLM_CASES = honest_cases()


@pytest.fixture(scope="module")
def evaluators():
    pool = Evaluators(device="cuda")
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def honest_softmax_ms(evaluators: Evaluators) -> float:
    verdict = evaluators.get("softmax_rows").evaluate(candidate((HONEST / "softmax.py").read_text(), "softmax"))
    assert verdict.verified and verdict.timing is not None and verdict.timing.measured
    return verdict.timing.candidate_ms


@pytest.mark.parametrize("name", sorted(HONEST_CASES))
def test_honest_candidate_is_verified_and_timed_on_cuda(name: str, evaluators: Evaluators):
    source = (HONEST / f"{name}.py").read_text()
    evaluator = evaluators.get(HONEST_CASES[name])
    verdicts = [evaluator.evaluate(candidate(source, name)) for _ in range(2)]
    for verdict in verdicts:
        assert verdict.verified, verdict.failure and verdict.failure.headline()
        timing = verdict.timing
        assert timing is not None and timing.measured, timing
        assert timing.trials >= 30
        assert timing.candidate_ms and timing.candidate_ms > 0
        assert timing.eager_ms and timing.eager_ms > 0
        assert timing.roofline is not None
        assert verdict.kernels, "kernel facts (registers, spills, shared memory) are reported"
    assert verdicts[0].checks_passed == verdicts[1].checks_passed


@pytest.mark.parametrize("case", [c.param("cuda") for c in CHEATS])
def test_cheat_is_rejected_on_cuda(case: Case, evaluators: Evaluators):
    assert_rejected_as(evaluators.evaluate(case), case)


@pytest.mark.parametrize("case", [c.param("cuda") for c in CONTROLS])
def test_control_is_verified_on_cuda(case: Case, evaluators: Evaluators):
    verdict = evaluators.evaluate(case)
    assert verdict.verified, f"{case.name}: false rejection: {verdict.failure and verdict.failure.headline()}"


@pytest.mark.parametrize("case", [c.param("cuda") for c in FAULT_CASES])
def test_fault_becomes_a_verdict_on_cuda(case: Case, evaluators: Evaluators):
    assert_rejected_as(evaluators.evaluate(case), case)


def test_parent_evaluates_on_after_faults_on_cuda(evaluators: Evaluators):
    source = (HONEST / "softmax.py").read_text()
    for config in sorted({c.config for c in FAULT_CASES if "timeout_s" not in dict(c.config)}, key=str):
        verdict = evaluators.get("softmax_rows", config).evaluate(candidate(source, "after-faults"))
        assert verdict.verified, (config, verdict.failure and verdict.failure.headline())


@pytest.mark.parametrize("case", [c.param("cuda") for c in GPU_CHEATS])
def test_gpu_only_cheat_is_rejected(case: Case, evaluators: Evaluators, honest_softmax_ms: float):
    verdict = evaluators.evaluate(case)
    if verdict.verified and verdict.timing is not None and verdict.timing.measured:
        print(f"{case.name}: verified at {verdict.timing.candidate_ms:.5f} ms vs honest {honest_softmax_ms:.5f} ms")
    assert_rejected_as(verdict, case)
    if case.kind is FailureKind.TIMING_ANOMALY:  # seen timing, or by the runtime guard's stream check before
        stages = {"timing", "runtime_guard"} if verdict.failure.rule == "work_escapes_stream" else {"timing"}
        assert verdict.failure.stage.value in stages


@pytest.mark.parametrize("case", [c.param("cuda") for c in GPU_CONTROLS])
def test_patching_the_timer_after_binding_changes_nothing(case: Case, evaluators: Evaluators, honest_softmax_ms: float):
    verdict = evaluators.evaluate(case)
    assert verdict.verified, verdict.failure and verdict.failure.headline()
    measured = verdict.timing.candidate_ms
    # the patched elapsed_time returns 1e-6 ms: a real measurement is the honest kernel's order of magnitude
    assert measured > 0.2 * honest_softmax_ms, (measured, honest_softmax_ms)
    assert measured < 5 * honest_softmax_ms + 0.05, (measured, honest_softmax_ms)


@pytest.mark.parametrize("case", [c.param() for c in HONEST_LLM_CASES])
def test_honest_llm_candidate_is_verified_on_cuda(case, evaluators: Evaluators):
    """The honest LLM-style corpus on CUDA, where tl.dot's TF32 and cuDNN's convolutions are the real ones (the CPU
    run has the interpreter's emulation and the class reference's rounding; here they meet real tensor cores)."""
    verdict = evaluators.get(case.operator).evaluate(candidate(case.source, case.name))
    evidence = verdict.failure.evidence if verdict.failure else ""
    assert verdict.verified, f"{case.name} ({case.style}): rejected on CUDA: {rejection_text(verdict)}\n{evidence}"
    assert verdict.triton_launches > 0
