"""The LLM writer: asks any OpenAI-compatible chat endpoint for a candidate kernel.

The only module that imports `openai`. Every prompt the bot sends lives in this file (the role
prompts of the experts come from rules/experts/*.yaml and are handed in by the composition root).
The prompt carries the operator's source, the expert role, retrieved hints and past kernels, and the
parent candidate with its diagnosis, so that a lineage repairs what the evaluator found.

A reply is parsed for the python block that defines ModelNew. Rate limits, server errors, timeouts
and dropped connections are retried with exponential backoff; a budget bounds calls and tokens.
Nothing the endpoint does can crash the search: a garbled or empty reply, or a request that keeps
failing, becomes a Candidate with no source whose notes say why (the loop records it as a
WRITER_ERROR), and an exhausted budget makes the writer propose nothing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath

import openai
from pydantic import BaseModel, ConfigDict, Field

from foundry.core.protocols import Hint, ProposalRequest
from foundry.core.records import Candidate, Diagnosis, Verdict
from foundry.writers.llm_broker import BrokerClient, ChatReply, ChatRequest

log = logging.getLogger(__name__)

FAILURE_KIND_GENE = "failure_kind"  # how a failed proposal names its kind for the search loop
DEFAULT_MODEL = "gpt-4.1"
SOURCE_LIMIT = 12_000  # characters of any one source quoted in a prompt
PAST_KERNELS = 2  # retrieved kernels quoted in a prompt
CONTEXT_LINES = 3  # lines of the parent's source shown around a diagnosed line


# -- prompts: every word the bot says to a model is below --------------------------------------

SYSTEM_PROMPT = """\
You write Triton GPU kernels that replace PyTorch operators. You receive an operator in KernelBench \
format (class Model, get_inputs, get_init_inputs) and write a Python module defining class ModelNew.

Rules the evaluator enforces (a candidate that breaks one is rejected):
- ModelNew(nn.Module) takes the same constructor arguments as Model and has the same parameters and \
buffers (state_dict keys and shapes); its state is loaded from a trained Model.
- forward computes the result with @triton.jit kernels that it launches; only allocation, view and \
layout torch ops may run outside Triton{hybrid}.
- Imports: torch, torch.nn, torch.nn.functional, torch.nn.init, torch.autograd, triton, \
triton.language (and its extra.cuda / extra.libdevice), math, typing only; every torch or triton name \
you use must be a public one (no module objects, private members, hooks, dispatch modes or op registration).
- Plain Python only: no match statements, async, yield, walrus, metaclasses, string annotations or \
dunder methods other than __init__; decorators only triton.jit, triton.autotune, triton.heuristics, \
staticmethod, classmethod, property and torch.no_grad. @triton.autotune and @triton.heuristics are fine.
- No try/except, no caching of results between calls, no state stored on self in forward, no \
environment, threads, streams, timers, seeds, eval/exec/getattr, no reference to Model or get_inputs.
- Outputs have the reference's shape, dtype and contents for every input, within {precision} \
tolerance; inputs must not be modified.

Reply with one ```python block holding the complete module (imports, kernels, ModelNew) and nothing \
after it except, optionally, a short note on what you changed."""

TRAINING_PROMPT = """\
This operator is used in training: the gradients of its floating inputs and of every parameter are checked \
against autograd's, with random upstream gradients, also after the parameters change in place. Compute it in a \
torch.autograd.Function whose forward and backward both launch @triton.jit kernels (the same rule on torch ops \
holds in backward), apply it to the parameters themselves (not detached), and return a gradient for every \
argument of apply that requires one, whichever of them require grad (ctx.needs_input_grad), for upstream \
gradients of any layout and size, and for a second backward through the same graph. Decorate the backward with \
@torch.autograd.function.once_differentiable (double backward must raise, not silently give zero)."""

ROLE_PROMPT = "Your role in this search:\n{role}"

OPERATOR_PROMPT = "The operator to replace ({ref}, dtype {dtype}):\n```python\n{source}\n```"

HINTS_PROMPT = "What worked before on similar operators:\n{hints}"

PAST_KERNEL_PROMPT = "A verified kernel from an earlier run ({label}):\n```python\n{source}\n```"

FIRST_PROMPT = "Write the first ModelNew for this operator."

PARENT_PROMPT = "The parent candidate {cid} ({state}):\n```python\n{source}\n```"

REPAIR_PROMPT = "Fix the parent. The evaluator rejected it:\n{diagnosis}"

IMPROVE_PROMPT = "The parent is verified. Make it faster without breaking it. What the evaluator measured:\n{facts}"


class LLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None  # None: the openai client's default (or OPENAI_BASE_URL)
    api_key: str | None = Field(default=None, repr=False)
    model: str = DEFAULT_MODEL  # default model; an expert may name its own
    models: dict[str, str] = Field(default_factory=dict)  # expert name → model
    temperatures: dict[str, float] = Field(default_factory=dict)  # expert name → temperature
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    max_calls: int = Field(default=64, ge=0)  # requests sent, retries included
    max_tokens: int = Field(default=500_000, ge=0)  # prompt + completion tokens over the run
    reply_tokens: int = Field(default=8192, ge=256)  # max_tokens of one completion
    timeout_s: float = Field(default=180.0, gt=0)
    retries: int = Field(default=4, ge=0)
    backoff_s: float = Field(default=2.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> LLMConfig:
        env = os.environ if env is None else env
        values: dict[str, object] = {
            "base_url": env.get("OPENAI_BASE_URL") or None,
            "api_key": env.get("OPENAI_API_KEY") or None,
        }
        if env.get("FOUNDRY_LLM_MODEL"):
            values["model"] = env["FOUNDRY_LLM_MODEL"]
        values.update(overrides)
        return cls.model_validate(values)


class LLMReply(BaseModel):
    """What the writer keeps of one chat completion."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


class WriterFailure(Exception):
    """A proposal that cannot be made; becomes a failed Candidate, never leaves the writer."""


class UnreadableReply(Exception):
    """The endpoint answered something the client could not read (propose reports it as such)."""


# -- code extraction ------------------------------------------------------------------------

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
PYTHON_FENCES = ("", "python", "py", "python3")
DEFINES_MODEL_NEW = re.compile(r"^class\s+ModelNew\b", re.MULTILINE)


def extract_code(text: str) -> str | None:
    """The python block of a reply that defines ModelNew (the last such block when there are
    several, since models put their final answer last); an unfenced reply that is plainly a module
    defining ModelNew is taken whole. None when there is no such code."""
    blocks = [(lang.lower(), body) for lang, body in FENCE.findall(text)]
    defining = [
        body for lang, body in blocks if lang in ("", "python", "py", "python3") and DEFINES_MODEL_NEW.search(body)
    ]
    if not defining:
        defining = [body for _, body in blocks if DEFINES_MODEL_NEW.search(body)]
    if defining:
        return defining[-1].strip() + "\n"
    if not blocks and DEFINES_MODEL_NEW.search(text):
        start = min((m.start() for m in re.finditer(r"^(import|from)\s+\w", text, re.MULTILINE)), default=0)
        return text[start:].strip() + "\n"
    return None


# -- prompt assembly ------------------------------------------------------------------------


def clip(source: str, limit: int = SOURCE_LIMIT) -> str:
    if len(source) <= limit:
        return source
    return source[:limit] + f"\n# … [{len(source) - limit} characters cut]"


def numbered_context(source: str, line: int, around: int = CONTEXT_LINES) -> str:
    lines = source.splitlines()
    lo, hi = max(line - around, 1), min(line + around, len(lines))
    return "\n".join(f"{'>' if n == line else ' '}{n:4d} | {lines[n - 1]}" for n in range(lo, hi + 1))


def describe_diagnosis(diagnosis: Diagnosis, source: str) -> str:
    parts = [diagnosis.headline()]
    if diagnosis.line and source:
        parts.append("at:\n" + numbered_context(source, diagnosis.line))
    if diagnosis.metrics:
        parts.append("statistics: " + ", ".join(f"{k}={v:.4g}" for k, v in sorted(diagnosis.metrics.items())))
    if diagnosis.evidence:
        parts.append("evidence:\n" + diagnosis.evidence.strip())
    return "\n".join(parts)


def describe_performance(verdict: Verdict) -> str:
    lines = []
    timing = verdict.timing
    if timing is not None and timing.measured:
        line = f"candidate {timing.candidate_ms:.4f} ms, eager {timing.eager_ms:.4f} ms"
        if timing.speedup_eager:
            line += f" ({timing.speedup_eager:.2f}x over eager"
            line += f", {timing.speedup_compile:.2f}x over torch.compile)" if timing.speedup_compile else ")"
        lines.append(line)
        if timing.roofline is not None:
            r = timing.roofline
            lines.append(
                f"{r.bound}-bound, at {r.pct_of_floor:.0f}% of the roofline floor "
                f"({r.bytes_moved} bytes, {r.flops} FLOPs)"
            )
        if timing.host_bound:
            lines.append(
                f"the host needs {timing.host_ms:.4f} ms to launch one call, longer than the device runs it: "
                "fewer launches and allocations per call would let it keep up"
            )
    else:
        lines.append("timing not measured (no GPU); fewer launches, no spills and wide blocks rank higher")
    lines.append(f"{verdict.triton_launches} Triton launches over {verdict.trials} trials")
    for k in verdict.kernels:
        lines.append(
            f"kernel {k.name}: registers {k.registers}, spills {k.spills}, shared memory "
            f"{k.shared_bytes} B, warps {k.num_warps}, stages {k.num_stages}"
        )
    if verdict.library_ops:
        lines.append("library ops outside Triton: " + ", ".join(verdict.library_ops))
    lines.extend("warning: " + w.headline() for w in verdict.warnings)
    return "\n".join(lines)


def describe_hints(hints: Sequence[Hint]) -> str:
    return "\n".join(
        f"- {h.suggestion}" + (f" (genes: {', '.join(f'{k}={v}' for k, v in h.genes.items())})" if h.genes else "")
        for h in hints
    )


def build_messages(request: ProposalRequest, role_prompt: str) -> list[dict[str, str]]:
    spec = request.spec
    hybrid = f" and these library ops: {', '.join(spec.hybrid_ops)}" if spec.hybrid_ops else ""
    system = SYSTEM_PROMPT.format(hybrid=hybrid, precision=spec.precision)
    if spec.training:
        system += "\n\n" + TRAINING_PROMPT
    if role_prompt:
        system += "\n\n" + ROLE_PROMPT.format(role=role_prompt.strip())
    ref = f"{PurePath(spec.path).name}::{spec.class_name}"  # no local directories leave the machine
    parts = [OPERATOR_PROMPT.format(ref=ref, dtype=spec.dtype, source=clip(request.operator_source))]
    if request.hints:
        parts.append(HINTS_PROMPT.format(hints=describe_hints(request.hints)))
    for past in request.past_kernels[:PAST_KERNELS]:
        parts.append(PAST_KERNEL_PROMPT.format(label=past.notes or past.id, source=clip(past.source)))
    parent, verdict = request.parent, request.parent_verdict
    if parent is None or not parent.source.strip():
        parts.append(FIRST_PROMPT)
    else:
        state = "verified" if verdict and verdict.verified else "rejected"
        parts.append(PARENT_PROMPT.format(cid=parent.id, state=state, source=clip(parent.source)))
        if verdict is not None and verdict.failure is not None:
            parts.append(REPAIR_PROMPT.format(diagnosis=describe_diagnosis(verdict.failure, parent.source)))
        elif verdict is not None:
            parts.append(IMPROVE_PROMPT.format(facts=describe_performance(verdict)))
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


# -- the writer -----------------------------------------------------------------------------


RETRYABLE = (openai.RateLimitError, openai.APITimeoutError, openai.APIConnectionError, openai.InternalServerError)


def chat(client: openai.OpenAI, request: ChatRequest) -> ChatReply:
    """One chat completion through `client`; every failure becomes a ChatReply that says what it was."""
    try:
        response = client.chat.completions.create(
            model=request.model,
            messages=request.messages,  # type: ignore[arg-type]
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            seed=request.seed,
        )
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        text = (getattr(message, "content", None) or "") if message is not None else ""
        usage = getattr(response, "usage", None)
        return ChatReply(
            id=request.id,
            text=text,
            model=str(getattr(response, "model", "") or request.model),
            prompt_tokens=None if usage is None else int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=None if usage is None else int(getattr(usage, "completion_tokens", 0) or 0),
        )
    except RETRYABLE as exc:
        response = getattr(exc, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        return ChatReply(id=request.id, error="retryable", message=f"{type(exc).__name__}: {exc}", retry_after=header)
    except openai.APIStatusError as exc:  # 4xx other than 429: retrying will not help
        return ChatReply(id=request.id, error="refused", message=f"{exc.status_code} {exc.message}")
    except openai.OpenAIError as exc:
        return ChatReply(id=request.id, error="client", message=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # whatever the endpoint sent, the search goes on
        return ChatReply(id=request.id, error="unreadable", message=f"{type(exc).__name__}: {exc}")


def make_client(base_url: str | None, api_key: str | None, timeout_s: float) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=base_url,
        api_key=api_key or "unused",  # local endpoints often need none
        timeout=timeout_s,
        max_retries=0,  # retries are the writer's: counted against its budget, with its backoff
    )


def answerer(base_url: str | None, api_key: str | None) -> Callable[[ChatRequest], ChatReply]:
    """The key holder's side of the broker: requests answered with a client that holds the key."""
    clients: dict[float, openai.OpenAI] = {}
    lock = threading.Lock()

    def answer(request: ChatRequest) -> ChatReply:
        with lock:
            client = clients.get(request.timeout_s) or make_client(base_url, api_key, request.timeout_s)
            clients[request.timeout_s] = client
        return chat(client, request)

    return answer


class LLMWriter:
    name = "llm"

    def __init__(
        self,
        config: LLMConfig,
        roles: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self.roles = dict(roles or {})
        self.sleep = sleep
        # the broker (the key holder's end of a socket, when this process runs without the key), else a client
        self.broker = BrokerClient.from_env()
        self.client = None if self.broker else make_client(config.base_url, config.api_key, config.timeout_s)
        self.lock = threading.Lock()
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0

    @property
    def tokens_used(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def budget_left(self) -> bool:
        return self.calls < self.config.max_calls and self.tokens_used < self.config.max_tokens

    def propose(self, request: ProposalRequest) -> Sequence[Candidate]:
        out: list[Candidate] = []
        messages = build_messages(request, self.roles.get(request.expert, ""))
        for n in range(request.count):
            if not self.budget_left():
                log.info("LLM budget spent (%d calls, %d tokens): no more proposals", self.calls, self.tokens_used)
                break
            seed = (request.seed + n) % (2**31)
            try:
                reply = self.complete(messages, request.expert, seed)
            except WriterFailure as exc:
                out.append(self.failed(request, n, str(exc)))
                continue
            except UnreadableReply as exc:
                out.append(self.failed(request, n, f"the reply could not be read: {exc}"))
                continue
            except Exception as exc:  # whatever the endpoint sent, the search goes on
                log.debug("the LLM reply could not be read", exc_info=True)
                out.append(self.failed(request, n, f"the reply could not be read: {type(exc).__name__}: {exc}"))
                continue
            code = extract_code(reply.text)
            if code is None:
                excerpt = reply.text.strip()[:300] or "(empty reply)"
                out.append(
                    self.failed(
                        request, n, f"the reply of {reply.model} has no python block defining ModelNew: {excerpt}"
                    )
                )
                continue
            digest = hashlib.sha256(code.encode()).hexdigest()[:8]
            out.append(
                Candidate(
                    id=f"llm-i{request.island}-g{request.generation}-{n}-{digest}",
                    source=code,
                    writer=self.name,
                    expert=request.expert,
                    island=request.island,
                    generation=request.generation,
                    parent_id=request.parent.id if request.parent else None,
                    notes=f"model {reply.model}, {reply.prompt_tokens}+{reply.completion_tokens} tokens",
                )
            )
        return out

    def failed(self, request: ProposalRequest, n: int, message: str) -> Candidate:
        log.warning("LLM proposal for island %d failed: %s", request.island, message)
        return Candidate(
            id=f"llm-i{request.island}-g{request.generation}-{n}-failed",
            source="",
            writer=self.name,
            expert=request.expert,
            island=request.island,
            generation=request.generation,
            parent_id=request.parent.id if request.parent else None,
            genes={FAILURE_KIND_GENE: "writer_error"},
            notes=message,
        )

    def model_for(self, expert: str) -> str:
        return self.config.models.get(expert) or self.config.model

    def complete(self, messages: list[dict[str, str]], expert: str, seed: int) -> LLMReply:
        """One chat completion, retried on transient errors; WriterFailure when it cannot be had."""
        model = self.model_for(expert)
        temperature = self.config.temperatures.get(expert, self.config.temperature)
        jitter = random.Random(seed)
        last = ""
        for attempt in range(self.config.retries + 1):
            with self.lock:
                if not self.budget_left():
                    raise WriterFailure(
                        f"LLM budget spent after {self.calls} calls and {self.tokens_used} tokens"
                        + (f"; last error: {last}" if last else "")
                    )
                self.calls += 1
            request = ChatRequest(
                model=model,
                messages=messages,
                temperature=temperature,
                max_tokens=self.config.reply_tokens,
                seed=seed,
                timeout_s=self.config.timeout_s,
            )
            reply = self.broker.chat(request) if self.broker else chat(self.client, request)  # type: ignore[arg-type]
            if reply.error == "retryable":
                last = reply.message
                delay = self.backoff(attempt, reply.retry_after, jitter)
                log.info("LLM request failed (%s); retry %d in %.1f s", last, attempt + 1, delay)
                if attempt < self.config.retries:
                    self.sleep(delay)
                continue
            if reply.error == "refused":
                raise WriterFailure(f"the endpoint refused the request: {reply.message}")
            if reply.error == "client":
                raise WriterFailure(f"the LLM client failed: {reply.message}")
            if reply.error == "unreadable":
                raise UnreadableReply(reply.message)
            return self.account(reply, model)
        raise WriterFailure(f"no reply after {self.config.retries + 1} attempts; last error: {last}")

    def backoff(self, attempt: int, retry_after: str | None, jitter: random.Random) -> float:
        delay = self.config.backoff_s * (2**attempt) * (1 + 0.25 * jitter.random())
        if retry_after:
            try:
                delay = max(delay, float(retry_after))
            except ValueError:
                pass
        return min(delay, self.config.backoff_max_s)

    def account(self, reply: ChatReply, model: str) -> LLMReply:
        prompt = reply.prompt_tokens or 0
        completion = reply.completion_tokens or 0
        if reply.prompt_tokens is None and reply.completion_tokens is None:
            completion = len(reply.text) // 4  # some local servers report nothing: estimate, so the budget binds
        with self.lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
        return LLMReply(text=reply.text, model=reply.model or model, prompt_tokens=prompt, completion_tokens=completion)
