"""The LLM writer through the broker, in one process: the writer holds no key and finds its end of a socket
pair in FOUNDRY_LLM_BROKER_FD; the broker answers with the key (llm.answerer) against the scripted server.
Retries, refusals and a broker that goes away behave as they do without the broker."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from foundry.core.protocols import ProposalRequest
from foundry.core.records import OperatorSpec
from foundry.writers import llm_broker
from foundry.writers.llm import LLMConfig, LLMWriter, answerer
from llm_server import FIXTURES, ScriptedLLM, error, kernel_reply

CORRECT = (FIXTURES / "kernel_correct.py").read_text()
KEY = "broker-only-key-5e1c"


def request() -> ProposalRequest:
    spec = OperatorSpec(path=str(FIXTURES / "scaled_relu.py"), name="scaled-relu")
    source = (FIXTURES / "scaled_relu.py").read_text()
    return ProposalRequest(spec=spec, operator_source=source, expert="fusion", island=0, generation=0)


class Authorized(ScriptedLLM):
    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.authorizations: list[str] = []

    def handler(self):  # type: ignore[no-untyped-def]
        base = super().handler()
        server = self

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:  # noqa: N802
                server.authorizations.append(self.headers.get("authorization", ""))
                super().do_POST()

        return Handler


@pytest.fixture
def brokered(monkeypatch: pytest.MonkeyPatch) -> Iterator[socket.socket]:
    """The writer's end in the environment; yields the broker's end (not yet served)."""
    ours, theirs = socket.socketpair()
    monkeypatch.setenv(llm_broker.ENV_FD, str(theirs.detach()))  # the writer's socket owns it now
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    yield ours
    ours.close()


def serve(sock: socket.socket, base_url: str) -> threading.Thread:
    thread = threading.Thread(target=llm_broker.serve, args=(sock, answerer(base_url, KEY)), daemon=True)
    thread.start()
    return thread


def test_the_writer_without_a_key_gets_its_kernel_and_retries_through_the_broker(brokered) -> None:
    sock = brokered
    sleeps: list[float] = []
    with Authorized([error(429, "slow down", headers={"retry-after": "2"}), kernel_reply("correct")]) as llm:
        serve(sock, llm.base_url)
        writer = LLMWriter(LLMConfig(base_url="http://127.0.0.1:9/unused", backoff_s=0.1), sleep=sleeps.append)
        assert writer.client is None and writer.broker is not None
        [cand] = writer.propose(request())
    assert cand.source == CORRECT
    assert llm.authorizations == [f"Bearer {KEY}"] * 2  # the key came from the broker, not the writer
    assert sleeps == [2.0] and writer.calls == 2


def test_a_refusal_through_the_broker_is_a_failed_candidate(brokered) -> None:
    sock = brokered
    with ScriptedLLM([error(400, "bad model name")]) as llm:
        serve(sock, llm.base_url)
        [cand] = LLMWriter(LLMConfig()).propose(request())
    assert cand.source == "" and "400" in cand.notes and "bad model name" in cand.notes


def test_a_broker_that_goes_away_is_a_failed_candidate_not_a_hang(brokered) -> None:
    sock = brokered
    writer = LLMWriter(LLMConfig(retries=0))
    sock.close()
    [cand] = writer.propose(request())
    assert cand.source == "" and "broker" in cand.notes
