"""The search driven by the LLM writer against a local OpenAI-compatible server, with the real
evaluator (isolated children, Triton interpreter on CPU). Each scripted reply has an expected fate."""

from __future__ import annotations

import pytest
import torch
from foundry.core.records import FailureKind
from foundry.evaluate.evaluator import CandidateEvaluator
from foundry.evolve import Budget, LocalExecutor, Optimizer, SearchConfig, load_experts
from foundry.spec.loader import load_operator
from foundry.writers.llm import LLMConfig, LLMWriter
from llm_server import FIXTURES, ScriptedLLM, error, kernel_reply, reply

pytestmark = [pytest.mark.interp, pytest.mark.e2e, pytest.mark.slow]


def expect_in_prompt(*needles: str):
    def check(body):
        text = "\n".join(m["content"] for m in body["messages"])
        for needle in needles:
            assert needle in text, f"the prompt lacks {needle!r}"

    return check


def search(llm: ScriptedLLM, budget: int, islands: int, sleeps: list[float], **writer_kw):
    operator = load_operator(str(FIXTURES / "scaled_relu.py"))
    experts = load_experts()
    config = LLMConfig(base_url=llm.base_url, api_key="test-key", model="scripted", backoff_s=0.01, **writer_kw)
    writer = LLMWriter(config, roles={r.name: r.prompt for r in experts}, sleep=sleeps.append)
    executor = LocalExecutor([CandidateEvaluator(operator)], slots_per_evaluator=2)
    cfg = SearchConfig(islands=islands, budget=Budget(candidates=budget), seed=3, offspring=1)
    return Optimizer(operator.spec, operator.source, [writer], executor, experts, cfg).run(), writer


def test_the_search_keeps_the_good_repairs_the_broken_and_rejects_the_rest():
    # Requests arrive island by island, generation by generation (islands 0 and 1):
    #   g0/i0 correct · g0/i1 broken (forgets the scale → mismatch)
    #   g1/i0 a cheat (PyTorch does the work) · g1/i1 the fix, asked with the mismatch diagnosis
    #   g2/i0 garbage · g2/i1 429, then a correct wider variant
    steps = [
        kernel_reply("correct", check=expect_in_prompt("You are the fusion expert", "Write the first ModelNew")),
        kernel_reply("broken", check=expect_in_prompt("You are the memory-access expert")),
        kernel_reply("cheat", check=expect_in_prompt("The parent is verified", "Make it faster")),
        kernel_reply(
            "fixed",
            check=expect_in_prompt("Fix the parent", "[correctness/mismatch]", "y = tl.maximum(x + b, 0.0)"),
        ),
        reply("Sorry, as a language model I cannot write Triton today."),
        error(429, "rate limited"),
        kernel_reply("wide"),
    ]
    sleeps: list[float] = []
    with ScriptedLLM(steps) as llm:
        result, writer = search(llm, budget=6, islands=2, sleeps=sleeps)
    assert llm.failures == []
    assert len(llm.requests) == 7 and len(sleeps) == 1  # the 429 was retried once

    fate = {e.candidate.id: e for e in result.entries}
    order = [e.candidate for e in result.entries]
    assert len(order) == 6 and result.evaluated == 6
    correct, broken, cheat, fixed, garbage, wide = order
    assert fate[correct.id].verdict.verified
    assert fate[broken.id].verdict.failure.kind == FailureKind.MISMATCH
    assert fate[cheat.id].verdict.failure.kind == FailureKind.RUNTIME_GUARD and cheat.parent_id == correct.id
    assert fate[fixed.id].verdict.verified and fixed.parent_id == broken.id and fixed.island == 1
    assert fate[garbage.id].verdict.failure.kind == FailureKind.WRITER_ERROR
    assert "no python block defining ModelNew" in fate[garbage.id].verdict.failure.message
    assert fate[wide.id].verdict.verified

    assert result.verified and result.best.candidate.id in {correct.id, fixed.id, wide.id}
    assert result.best_verdict.verified and result.timing_measured == torch.cuda.is_available()
    assert result.failures == {"mismatch": 1, "runtime_guard": 1, "writer_error": 1}
    assert result.tokens_used == writer.tokens_used > 0


def test_a_timing_out_endpoint_ends_as_writer_errors_and_no_kernel():
    steps = [reply("late", delay_s=1.5) for _ in range(4)]
    sleeps: list[float] = []
    with ScriptedLLM(steps) as llm:
        result, _ = search(llm, budget=2, islands=1, sleeps=sleeps, timeout_s=0.3, retries=1)
    assert len(llm.requests) == 4  # two proposals, each tried twice
    assert [e.verdict.failure.kind for e in result.entries] == [FailureKind.WRITER_ERROR] * 2
    assert all("no reply after 2 attempts" in e.verdict.failure.message for e in result.entries)
    assert not result.verified and result.best is None
