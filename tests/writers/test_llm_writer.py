"""The LLM writer against a local OpenAI-compatible server: extraction, prompts, retries, budget."""

from __future__ import annotations

import pytest
from foundry.core.protocols import Hint, ProposalRequest
from foundry.core.records import Candidate, Diagnosis, FailureKind, OperatorSpec, Stage, Verdict
from foundry.writers.llm import LLMConfig, LLMWriter, build_messages, extract_code
from llm_server import FIXTURES, ScriptedLLM, error, kernel_reply, reply

SPEC = OperatorSpec(path=str(FIXTURES / "scaled_relu.py"), name="scaled-relu")
OPERATOR = (FIXTURES / "scaled_relu.py").read_text()
CORRECT = (FIXTURES / "kernel_correct.py").read_text()


def request(**kw) -> ProposalRequest:
    return ProposalRequest(spec=SPEC, operator_source=OPERATOR, expert="fusion", island=0, generation=0, **kw)


def writer(llm: ScriptedLLM, sleeps: list[float] | None = None, **kw) -> LLMWriter:
    config = LLMConfig(base_url=llm.base_url, api_key="test-key", model="scripted-model", **kw)
    sink = sleeps if sleeps is not None else []
    return LLMWriter(config, roles={"fusion": "You are the fusion expert."}, sleep=sink.append)


def test_extracts_the_block_that_defines_model_new():
    text = f"First a helper:\n```python\nx = 1\n```\nthen the answer:\n```python\n{CORRECT}```\ndone"
    assert extract_code(text) == CORRECT
    two = f"```py\n{CORRECT.replace('256', '64')}```\nbetter:\n```\n{CORRECT}```"
    assert extract_code(two) == CORRECT  # the last defining block wins
    assert extract_code(f"```python\n{CORRECT}") == CORRECT  # unterminated fence (reply cut off)
    assert extract_code("Sure! Here it is:\n" + CORRECT) == CORRECT  # unfenced module
    assert extract_code("I cannot help with that.") is None
    assert extract_code("```python\nprint('hello')\n```") is None
    assert extract_code("") is None


def test_prompt_carries_operator_role_hints_past_kernels_and_the_parents_diagnosis():
    broken = (FIXTURES / "kernel_broken.py").read_text()
    parent = Candidate(id="p1", source=broken)
    diagnosis = Diagnosis(
        stage=Stage.CORRECTNESS,
        kind=FailureKind.MISMATCH,
        message="242 of 480 elements outside tolerance",
        rule="tolerance",
        line=13,
        metrics={"max_abs_error": 1.47, "mismatch_share": 0.504},
    )
    verdict = Verdict(candidate_id="p1", verified=False, policy="strict", device="cpu", diagnoses=(diagnosis,))
    req = request(
        parent=parent,
        parent_verdict=verdict,
        hints=(Hint(id="h1", suggestion="fold the bias add into the load", genes={"BLOCK": 256}),),
        past_kernels=(Candidate(id="old", source=CORRECT, notes="scaled-relu on H200, 1.9x"),),
    )
    system, user = (m["content"] for m in build_messages(req, "You are the fusion expert."))
    assert "class ModelNew" in system and "You are the fusion expert." in system
    assert "fp32" in system
    assert OPERATOR.strip() in user
    assert "(scaled_relu.py::Model, dtype float32)" in user and str(FIXTURES) not in user
    assert "fold the bias add into the load (genes: BLOCK=256)" in user
    assert "scaled-relu on H200, 1.9x" in user and CORRECT.strip() in user
    assert "Fix the parent" in user and "[correctness/mismatch] (rule tolerance, line 13)" in user
    assert "max_abs_error=1.47" in user and "mismatch_share=0.504" in user
    assert ">  13 |     y = tl.maximum(x + b, 0.0)" in user  # the diagnosed line, in context


def test_a_verified_parent_gets_its_performance_facts():
    from foundry.core.records import KernelFacts, Roofline, Timing

    timing = Timing(
        measured=True,
        candidate_ms=0.5,
        eager_ms=1.0,
        compile_ms=0.6,
        roofline=Roofline(
            bytes_moved=1 << 20,
            flops=0,
            floor_ms=0.4,
            pct_of_floor=80.0,
            bound="memory",
            bandwidth_gbs=4000,
            peak_tflops=60,
        ),
    )
    verdict = Verdict(
        candidate_id="p",
        verified=True,
        policy="strict",
        device="gpu",
        timing=timing,
        triton_launches=4,
        trials=4,
        kernels=(KernelFacts(name="_k", registers=40, spills=3, shared_bytes=0, num_warps=4, num_stages=2),),
    )
    _, user = (
        m["content"]
        for m in build_messages(request(parent=Candidate(id="p", source=CORRECT), parent_verdict=verdict), "")
    )
    assert "Make it faster" in user
    assert "2.00x over eager, 1.20x over torch.compile" in user
    assert "memory-bound, at 80% of the roofline floor" in user
    assert "spills 3" in user
    assert "to launch one call" not in user  # no host time measured

    slow_launch = verdict.model_copy(update={"timing": timing.model_copy(update={"host_ms": 0.9})})
    _, user = (
        m["content"]
        for m in build_messages(request(parent=Candidate(id="p", source=CORRECT), parent_verdict=slow_launch), "")
    )
    assert "the host needs 0.9000 ms to launch one call, longer than the device runs it" in user


def test_a_correct_reply_becomes_a_candidate_and_tokens_are_counted():
    with ScriptedLLM([kernel_reply("correct")]) as llm:
        w = writer(llm)
        [cand] = w.propose(request(seed=5))
    assert cand.source == CORRECT and cand.writer == "llm" and cand.expert == "fusion"
    assert llm.requests[0]["model"] == "scripted-model" and llm.requests[0]["seed"] == 5
    sent = f"Here is the kernel.\n\n```python\n{CORRECT}```\n"
    assert w.tokens_used == 100 + 10 + len(sent) // 10  # as the server reported in usage
    assert w.calls == 1


def test_model_per_expert():
    with ScriptedLLM([kernel_reply("correct")]) as llm:
        config = LLMConfig(base_url=llm.base_url, api_key="k", model="default", models={"fusion": "fusion-model"})
        LLMWriter(config).propose(request())
    assert llm.requests[0]["model"] == "fusion-model"


def test_garbage_and_empty_replies_are_writer_errors():
    with ScriptedLLM([reply("I am not able to write that kernel."), reply("")]) as llm:
        cands = writer(llm).propose(request(count=2))
    assert [c.source for c in cands] == ["", ""]
    assert all(c.genes["failure_kind"] == "writer_error" for c in cands)
    assert "no python block defining ModelNew: I am not able" in cands[0].notes
    assert "(empty reply)" in cands[1].notes


def test_a_garbled_body_is_a_writer_error_not_a_crash():
    with ScriptedLLM([error(200)]) as llm:
        llm.steps[0].raw = b"<html>this is not json"
        [cand] = writer(llm).propose(request())
    assert cand.source == "" and "the reply could not be read: JSONDecodeError" in cand.notes


def test_rate_limit_then_success_is_retried_with_backoff():
    sleeps: list[float] = []
    with ScriptedLLM([error(429, "slow down", headers={"retry-after": "3"}), kernel_reply("correct")]) as llm:
        [cand] = writer(llm, sleeps, backoff_s=0.5).propose(request())
    assert cand.source == CORRECT
    assert len(llm.requests) == 2
    assert sleeps == [3.0]  # the server's retry-after beats the shorter backoff


def test_server_errors_are_retried_and_client_errors_are_not():
    sleeps: list[float] = []
    with ScriptedLLM([error(503), error(500), kernel_reply("correct")]) as llm:
        [cand] = writer(llm, sleeps, backoff_s=1.0).propose(request())
    assert cand.source == CORRECT and len(sleeps) == 2 and sleeps[1] > sleeps[0] >= 1.0
    with ScriptedLLM([error(400, "bad model name"), kernel_reply("correct")]) as llm:
        [cand] = writer(llm).propose(request())
        assert len(llm.requests) == 1
    assert cand.source == "" and "400" in cand.notes and "bad model name" in cand.notes


def test_a_timeout_is_retried_then_given_up():
    with ScriptedLLM([reply("late", delay_s=2.0), reply("late", delay_s=2.0)]) as llm:
        [cand] = writer(llm, timeout_s=0.5, retries=1, backoff_s=0).propose(request())
        assert len(llm.requests) == 2
    assert cand.source == "" and "no reply after 2 attempts" in cand.notes and "Timeout" in cand.notes


def test_the_call_budget_bounds_requests_retries_included():
    with ScriptedLLM([error(429), kernel_reply("correct"), kernel_reply("wide")]) as llm:
        w = writer(llm, max_calls=2, backoff_s=0)
        first = w.propose(request(count=2))
        assert len(llm.requests) == 2
        assert w.propose(request()) == []
    assert [c.source for c in first] == [CORRECT]


def test_the_token_budget_bounds_proposals():
    with ScriptedLLM([kernel_reply("correct"), kernel_reply("wide")]) as llm:
        w = writer(llm, max_tokens=50)
        cands = w.propose(request(count=2))
        assert len(llm.requests) == 1
    assert len(cands) == 1 and w.tokens_used > 50


@pytest.mark.parametrize(
    "env,expected", [({}, None), ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, "http://127.0.0.1:9/v1")]
)
def test_config_from_environment(env, expected):
    config = LLMConfig.from_env(env | {"FOUNDRY_LLM_MODEL": "m"})
    assert config.base_url == expected and config.model == "m"
    secret = LLMConfig.from_env({"OPENAI_API_KEY": "s3cr3t"})
    assert secret.api_key == "s3cr3t" and "s3cr3t" not in repr(secret)
