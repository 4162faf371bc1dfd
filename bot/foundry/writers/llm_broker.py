"""The LLM broker: the one process that holds the LLM key, so that operator code never runs beside it.

`foundry optimize` started with secret-looking variables in its environment (OPENAI_API_KEY, RAY_AUTH_TOKEN,
GITHUB_TOKEN, …) does not import the operator itself. It becomes the key holder: it marks itself
non-dumpable, opens a socket pair and starts the same command again as a child whose *initial* environment
holds none of those variables and which lacks CAP_SYS_PTRACE, CAP_SYS_ADMIN and CAP_PERFMON (so, even as
root, it cannot read the key holder's /proc/<pid>/environ). The key holder then only answers the child's
chat requests (JSON lines over the socket, ChatRequest → ChatReply) with a client from writers/llm.py (still
the only importer of openai), and exits with the child's status; the process split is in
commands/optimize.py. The child's LLM writer finds its end of the socket in FOUNDRY_LLM_BROKER_FD.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)

ENV_FD = "FOUNDRY_LLM_BROKER_FD"  # the child's end of the socket pair


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int = 0
    model: str
    messages: list[dict[str, str]]
    temperature: float
    max_tokens: int
    seed: int
    timeout_s: float = Field(gt=0)


class ChatReply(BaseModel):
    """One completion, or why there is none: `retryable` (rate limit, timeout, connection, 5xx), `refused`
    (another HTTP status), `client` (the client failed), `unreadable` (a reply that could not be read)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int = 0
    text: str = ""
    model: str = ""
    prompt_tokens: int | None = None  # None: the endpoint reported no usage
    completion_tokens: int | None = None
    error: Literal["retryable", "refused", "client", "unreadable"] | None = None
    message: str = ""
    retry_after: str | None = None


# -- the child's side -------------------------------------------------------------------------------


class BrokerClient:
    """The child's end: sends ChatRequests, matches ChatReplies by id (requests from several threads
    are in flight at once)."""

    def __init__(self, fd: int) -> None:
        self.sock = socket.socket(fileno=fd)
        self.reader = self.sock.makefile("r", encoding="utf-8")
        self.write_lock = threading.Lock()
        self.pending: dict[int, tuple[threading.Event, list[ChatReply]]] = {}
        self.pending_lock = threading.Lock()
        self.next_id = 0
        threading.Thread(target=self._read, name="llm-broker-client", daemon=True).start()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> BrokerClient | None:
        fd = (os.environ if environ is None else environ).get(ENV_FD)
        return cls(int(fd)) if fd else None

    def chat(self, request: ChatRequest) -> ChatReply:
        done = threading.Event()
        box: list[ChatReply] = []
        with self.pending_lock:
            self.next_id += 1
            rid = self.next_id
            self.pending[rid] = (done, box)
        line = request.model_copy(update={"id": rid}).model_dump_json() + "\n"
        try:
            with self.write_lock:
                self.sock.sendall(line.encode())
        except OSError as exc:
            return ChatReply(id=rid, error="client", message=f"the LLM broker is gone: {exc}")
        if not done.wait(request.timeout_s + 30):
            return ChatReply(id=rid, error="retryable", message="the LLM broker did not answer in time")
        return box[0]

    def _read(self) -> None:
        try:
            for line in self.reader:
                try:
                    reply = ChatReply.model_validate_json(line)
                except ValueError:
                    log.warning("unreadable line from the LLM broker: %.200s", line)
                    continue
                with self.pending_lock:
                    waiting = self.pending.pop(reply.id, None)
                if waiting is not None:
                    waiting[1].append(reply)
                    waiting[0].set()
        except OSError as exc:
            log.warning("the LLM broker's socket failed: %s", exc)
        with self.pending_lock:  # the broker closed: nobody waits forever
            for rid, (done, box) in self.pending.items():
                box.append(ChatReply(id=rid, error="client", message="the LLM broker closed its socket"))
                done.set()
            self.pending.clear()


# -- the key holder's side --------------------------------------------------------------------------


def serve(sock: socket.socket, answer: Callable[[ChatRequest], ChatReply]) -> None:
    """Answer chat requests from `sock` with `answer` until the socket closes, each on its own thread."""
    write_lock = threading.Lock()

    def reply_to(request: ChatRequest) -> None:
        reply = answer(request).model_copy(update={"id": request.id})
        try:
            with write_lock:
                sock.sendall((reply.model_dump_json() + "\n").encode())
        except OSError:
            pass  # the child is gone

    with sock.makefile("r", encoding="utf-8") as reader:
        for line in reader:
            try:
                request = ChatRequest.model_validate_json(line)
            except ValueError as exc:
                log.warning("unreadable request to the LLM broker: %s", exc)
                continue
            threading.Thread(target=reply_to, args=(request,), name="llm-broker", daemon=True).start()
