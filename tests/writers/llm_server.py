"""A local OpenAI-compatible chat server on 127.0.0.1 that serves scripted replies.

Real HTTP: the writer's real `openai` client talks to it. Each request to /v1/chat/completions takes
the next step of the script; a step sees the request body (so it can check what the prompt said)
and answers with a reply, an HTTP error, a delay past the client's timeout, or a raw body.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Step:
    status: int = 200
    text: str | None = None  # the assistant message
    raw: bytes | None = None  # a body sent as is (garbled JSON, …)
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    check: Callable[[dict[str, Any]], None] | None = None  # assertions on the request body


def reply(text: str, **kw: Any) -> Step:
    return Step(text=text, **kw)


def kernel_reply(name: str, note: str = "", **kw: Any) -> Step:
    code = (FIXTURES / f"kernel_{name}.py").read_text()
    return Step(text=f"Here is the kernel.\n\n```python\n{code}```\n{note}", **kw)


def error(status: int, message: str = "", **kw: Any) -> Step:
    body = json.dumps({"error": {"message": message or f"status {status}", "type": "server_error"}}).encode()
    return Step(status=status, raw=body, **kw)


class ScriptedLLM:
    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[dict[str, Any]] = []
        self.failures: list[str] = []  # assertion errors raised by step checks
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ScriptedLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def prompt(self, index: int) -> str:
        return "\n".join(m["content"] for m in self.requests[index]["messages"])

    def next_step(self, body: dict[str, Any]) -> Step:
        with self.lock:
            self.requests.append(body)
            if not self.steps:
                return error(500, "the script is out of steps")
            step = self.steps.pop(0)
        if step.check is not None:
            try:
                step.check(body)
            except AssertionError as exc:
                self.failures.append(str(exc))
        return step

    def handler(self) -> type[BaseHTTPRequestHandler]:
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                step = llm.next_step(body)
                if step.delay_s:
                    time.sleep(step.delay_s)
                if step.raw is not None:
                    payload = step.raw
                else:
                    text = step.text or ""
                    payload = json.dumps(
                        {
                            "id": f"chatcmpl-{len(llm.requests)}",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body.get("model", "scripted"),
                            "choices": [
                                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                            ],
                            "usage": {
                                "prompt_tokens": 100,
                                "completion_tokens": 10 + len(text) // 10,
                                "total_tokens": 110 + len(text) // 10,
                            },
                        }
                    ).encode()
                try:
                    self.send_response(step.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for key, value in step.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout): that is the point of a delayed step

        return Handler
