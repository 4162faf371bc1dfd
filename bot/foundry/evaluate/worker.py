"""The isolated child that runs one untrusted candidate.

Started by foundry.evaluate.isolation as `python -m foundry.evaluate.worker JOBDIR RESULT_FD CONTROL_FD`
with an environment stripped of secrets. It never sees the reference model, its outputs or the seeds:
it gets the inputs, the constructor arguments and the (perturbed) state dict, runs the candidate,
and returns raw facts (outputs, aten ops, launches, aliasing, mutation) for the parent to judge.
Messages go over a private pipe as JSON lines, never over stdout. Imports only stdlib, torch, triton.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import socket
import sys
import traceback
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CRASH_MARKERS = (
    "illegal memory access",
    "misaligned address",
    "unspecified launch failure",
    "device-side assert",
    "illegal instruction",
)
OOM_MARKERS = ("out of memory", "can't allocate memory", "cannot allocate memory")


class Channel:
    """Messages to the parent (JSON lines on a pipe) and the parent's words to this process (one per message
    on a SOCK_SEQPACKET socket, which also carries the file descriptors of the job's shared buffers)."""

    def __init__(self, result_fd: int, control_fd: int) -> None:
        self.out = os.fdopen(result_fd, "wb", buffering=0)
        self.control = socket.socket(fileno=control_fd)

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, default=str) + "\n").encode()
        view = memoryview(data)
        while view:
            written = self.out.write(view)
            view = view[written:]

    def receive(self) -> str:
        """The parent's next word ("" once it has closed its end)."""
        return self.control.recv(65536).decode().strip()

    def receive_fds(self, count: int) -> list[int]:
        """The `count` file descriptors the parent sent with the job ("fds N" messages)."""
        fds: list[int] = []
        while len(fds) < count:
            data, got, flags, _ = socket.recv_fds(self.control, 64, count - len(fds))
            fds.extend(got)
            if not data.startswith(b"fds ") or flags & socket.MSG_CTRUNC or not got:
                for fd in fds:
                    os.close(fd)
                raise OSError(f"expected {count} file descriptors from the evaluator, got {data[:40]!r}")
        return fds


# The rule a child-side failure is reported under (the line is often unknown: a CUDA fault surfaces at the
# next synchronization, outside the candidate's code).
ERROR_RULES = {
    "runtime_error": "raised",
    "early_exit": "exit",
    "oom": "out_of_memory",
    "resource_limit": "resources",
    "crash": "device_fault",
    "compile_error": "compile",
}


def classify(exc: BaseException, candidate_path: str) -> dict[str, Any]:
    text = "".join(traceback.format_exception(exc))
    lowered = text.lower()
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == candidate_path:
            line = frame.lineno
    kind = "runtime_error"
    rule = None
    if isinstance(exc, SystemExit):
        kind = "early_exit"
    elif isinstance(exc, MemoryError) or any(m in lowered for m in OOM_MARKERS):
        kind = "oom"
    elif type(exc).__name__ == "OutOfResources":
        kind = "resource_limit"
    elif any(m in lowered for m in CRASH_MARKERS):
        kind = "crash"
    elif "OutOfBounds(" in text and type(exc).__name__ in {"InterpreterError", "OutOfBounds"}:
        kind, rule = "crash", "out_of_bounds"  # interp_autotune.bound_memory: an illegal address on a GPU
        line = triton_error_line(exc, candidate_path) or line
    elif type(exc).__name__ in {"CompilationError", "CompileTimeAssertionFailure", "InterpreterError"}:
        kind = "compile_error"
        line = triton_error_line(exc, candidate_path) or line
    elif isinstance(exc, SyntaxError):
        kind = "compile_error"
        line = exc.lineno
    return {
        "kind": kind,
        "rule": rule or ERROR_RULES[kind],
        "message": f"{type(exc).__name__}: {str(exc).strip()[:500]}",
        "line": line,
        "evidence": text[-4000:],
    }


def triton_error_line(exc: BaseException, candidate_path: str) -> int | None:
    """Triton's CompilationError carries the kernel's source and a line relative to it."""
    src = getattr(exc, "src", None)
    node = getattr(exc, "node", None)
    rel = getattr(node, "lineno", None)
    fn = getattr(src, "fn", None)
    start = getattr(getattr(fn, "__code__", None), "co_firstlineno", None)
    if rel is not None and start is not None:
        return start + rel - 1
    return None


def storage_span(t: Any) -> tuple[int, int]:
    storage = t.untyped_storage()
    return storage.data_ptr(), storage.data_ptr() + storage.nbytes()


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[1] > a[0] and b[1] > b[0]


def describe_output(out: Any, torch: Any, inputs: list[Any], named_state: dict[str, Any]) -> dict[str, Any]:
    tensors = list(out) if isinstance(out, (tuple, list)) else [out]
    info: dict[str, Any] = {"container": type(out).__name__, "items": []}
    for t in tensors:
        item: dict[str, Any] = {"type": f"{type(t).__module__}.{type(t).__qualname__}"}
        if type(t) is torch.Tensor:
            span = storage_span(t)
            item.update(
                shape=list(t.shape),
                dtype=str(t.dtype).removeprefix("torch."),
                stride=list(t.stride()),
                aliases=[
                    f"input {i}"
                    for i, x in enumerate(inputs)
                    if isinstance(x, torch.Tensor) and overlaps(span, storage_span(x))
                ]
                + [f"parameter {n}" for n, p in named_state.items() if overlaps(span, storage_span(p))],
                overlapping=any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape, strict=True)),
            )
        info["items"].append(item)
    return info


def plain_outputs(out: Any, torch: Any) -> list[Any] | None:
    tensors = list(out) if isinstance(out, (tuple, list)) else [out]
    if not all(type(t) is torch.Tensor for t in tensors):
        return None
    return [t.detach().to("cpu", copy=True) for t in tensors]


def initial_states(states: list[dict[str, Any]], limit: int, torch: Any) -> dict[str, Any]:
    """Per key of the first build's state, positions (at most `limit`, drawn now that every constructor has run), each
    build's values there and, per dimension, at the next position along it (wrapping), flat, on the CPU
    (init_state.initial_state judges them)."""
    generator = torch.Generator().manual_seed(secrets.randbits(62))
    indices: dict[str, Any] = {}
    draws: list[dict[str, Any]] = [{} for _ in states]
    neighbors: list[dict[str, Any]] = [{} for _ in states]
    blocks: dict[str, Any] = {}  # a matrix too large to send whole: secret rows and columns of it, per build
    block_values: list[dict[str, Any]] = [{} for _ in states]
    for key, first in states[0].items():
        n = first.numel()
        idx = torch.randperm(n, generator=generator)[:limit] if n > limit else torch.arange(n)
        indices[key] = idx
        if first.dim() >= 2 and n > limit and first.is_floating_point():
            rows, cols = first.shape[0], n // first.shape[0]
            side = math.isqrt(limit)
            pick = (torch.randperm(rows, generator=generator)[:side], torch.randperm(cols, generator=generator)[:side])
            blocks[key] = pick
            for b, state in enumerate(states):
                t = state.get(key)
                if isinstance(t, torch.Tensor) and t.numel() == n:
                    matrix = t.detach().reshape(rows, cols)
                    block_values[b][key] = matrix[pick[0].to(t.device)][:, pick[1].to(t.device)].to("cpu", copy=True)
        nexts = [next_positions(idx, list(first.shape), d, torch) for d in range(first.dim())]
        for b, state in enumerate(states):
            t = state.get(key)
            if isinstance(t, torch.Tensor) and t.numel() == n:
                flat = t.detach().reshape(-1)
                draws[b][key] = flat[idx.to(t.device)].to("cpu", copy=True)
                neighbors[b][key] = [flat[j.to(t.device)].to("cpu", copy=True) for j in nexts]
    return {"indices": indices, "draws": draws, "neighbors": neighbors, "blocks": blocks, "block_values": block_values}


def reset_build(model_cls: Any, init: list[Any], torch: Any, device: str = "cpu") -> Any:
    """A module as deferred initialisation makes it (FSDP's meta-device path, torchtitan): built on the meta device,
    materialised by to_empty on `device` with every tensor holding what nobody wrote (NaN, -1 for integers), then
    reset_parameters() of every submodule that has one, in module order. The same code builds both sides."""
    with torch.device("meta"):
        model = model_cls(*init)
    model = model.to_empty(device=device)
    with torch.no_grad():
        for t in [*model.parameters(), *model.buffers()]:
            t.fill_(float("nan") if t.is_floating_point() or t.is_complex() else -1)
    for sub in model.modules():
        reset = getattr(sub, "reset_parameters", None)
        if callable(reset):
            reset()
    return model


def next_positions(idx: Any, shape: list[int], d: int, torch: Any) -> Any:
    """The flat positions one step further along dimension d (wrapping to 0) of a contiguous tensor of `shape`."""
    stride = 1
    for size in shape[d + 1 :]:
        stride *= size
    coord = (idx // stride) % shape[d]
    return torch.where(coord < shape[d] - 1, idx + stride, idx - coord * stride)


def fresh_copy(x: Any, torch: Any) -> Any:
    """The same values in a new buffer at another address (and a non-zero storage offset)."""
    if not isinstance(x, torch.Tensor):
        return x
    pad = 64
    base = torch.empty(x.numel() + pad, dtype=x.dtype, device=x.device)
    y = base[pad:].view(x.shape)
    y.copy_(x)
    return y


def run(job: dict[str, Any], jobdir: Path, channel: Channel, source: str) -> None:
    import time

    import torch

    clock = time.monotonic()
    stages: list[tuple[str, float]] = []  # where the child's time went (the parent logs it at debug level)

    def mark(name: str) -> None:
        nonlocal clock
        now = time.monotonic()
        stages.append((name, round(now - clock, 3)))
        clock = now

    device = job["device"]
    if device == "cuda" and job.get("gpu_memory_fraction"):
        torch.cuda.set_per_process_memory_fraction(float(job["gpu_memory_fraction"]))
    # library convolutions (hybrid policy) at the operator's precision: no TF32 for fp32 operators
    torch.backends.cudnn.allow_tf32 = bool(job.get("tf32", False))
    from foundry.evaluate import interp_autotune, jobfiles, timing  # binds the timer before candidate code runs
    from foundry.evaluate.exchange import PLAIN, call_plan, deliver, grad_enabled, with_plain
    from foundry.evaluate.runtime_guard import LaunchRecorder, OpLog, live_threads

    recorder = LaunchRecorder()
    recorder.install()
    interp_autotune.install()  # CPU: multi-config @triton.autotune runs each config in turn
    interp_autotune.keep_kernel_globals()  # CPU: the interpreter adds nothing to the candidate's module
    # What building the candidate needs: the constructor's arguments and the (perturbed) state. No trial's
    # inputs exist where candidate code could read them until it is built (imported, constructed, its state
    # loaded and on a GPU compiled ahead): they arrive after "run" (receive_trials).
    data = jobfiles.load(jobdir / "job.pt", mapped=device == "cuda")
    baseline_threads = live_threads()  # a thread started at import or in __init__ counts as left running
    mark("job loaded")
    candidate_path = str(jobdir / "candidate.py")

    def fail(stage: str, exc: BaseException) -> None:
        channel.send({"phase": "correctness", "stage": stage, "error": classify(exc, candidate_path)})

    try:
        module = jobfiles.load_candidate(source, candidate_path)
        model_cls = module.ModelNew
    except BaseException as exc:  # noqa: B036 - SystemExit from candidate code is data too
        return fail("load", exc)
    try:
        model = model_cls(*data["init"])
        if job.get("init_draws"):  # a training operator: what its constructor makes is judged too
            draws, limit = int(job["init_draws"]), int(job["init_sample"])
            builds = [model] + [model_cls(*data["init"]) for _ in range(draws - 1)]
            report = {"checked": initial_states([b.state_dict() for b in builds], limit, torch)}
            # and the mode each build starts in (a module is built training; one built in eval mode never updates
            # its batch statistics until someone calls .train())
            report["checked"]["training"] = sorted({bool(m.training) for b in builds for m in b.modules()})
            del builds
            if data.get("init_full") is not None:  # and at the operator's full size
                full = [model_cls(*data["init_full"]).state_dict() for _ in range(draws)]
                report["full"] = initial_states(full, limit, torch)
                del full
            # and through reset_parameters, as deferred initialisation builds it; on a GPU also made there (under
            # torch.device, to_empty onto it), as users building straight on the device get it
            on = data.get("init_device")
            for size, where in [("reset", "cpu"), ("reset-device", on)] if data.get("init_reset") else []:
                if where is None:
                    continue
                try:
                    resets = [reset_build(model_cls, data["init"], torch, where).state_dict() for _ in range(draws)]
                except Exception as exc:  # noqa: BLE001 - a module that cannot take this path: the parent says so
                    report[size] = f"{type(exc).__name__}: {exc}"[:300]
                else:
                    report[size] = initial_states(resets, limit, torch)
                    del resets
            if on is not None:
                with torch.device(on):
                    made = [model_cls(*data["init"]).state_dict() for _ in range(draws)]
                report["device"] = initial_states(made, limit, torch)
                del made
            jobfiles.save(report, jobdir / "initial_state.pt")
        missing = model.load_state_dict(data["state"], strict=True)
        del missing
    except BaseException as exc:  # noqa: B036
        return fail("load", exc)
    mark("candidate loaded")
    if device == "cuda":
        # Compile before asking for the device: correctness runs share it, but a timing run waits for all
        # of them, so the seconds a compile takes must not be spent holding it. On a throwaway copy of the
        # candidate's module: whatever its forward keeps (class attributes, module-level state, a flag that
        # only the first call launches the kernel) stays with the copy, and the calls that are judged start
        # as fresh as without it. Triton's cache on disk carries the compiled kernels over to the real module.
        try:
            dry = jobfiles.load_candidate(source, candidate_path)  # a name of its own, as unpredictable
            shapes = [jobfiles.meta_inputs(described) for described in job.get("inputs", [])]
            ahead = {"init": data["init"], "trials": [inputs for inputs in shapes if inputs is not None]}
            skipped = compile_ahead(dry.ModelNew, ahead, recorder, torch, dry)
        except BaseException as exc:  # noqa: B036 - no verdict: the real module was loaded above
            skipped = type(exc).__name__
        mark("compiled ahead" if skipped is None else f"not compiled ahead ({skipped})"[:40])
    channel.send({"phase": "ready"})
    if channel.receive() != "run":
        return
    clock = time.monotonic()  # the wait for the device is the parent's, not the child's
    received = receive_trials(job, jobdir, channel, torch)
    if isinstance(received, dict):  # no verdict on the candidate: the evaluator sends files from then on
        channel.send({"phase": "correctness", "stage": "load", "error": received})
        return
    data["trials"], reweights, call_buffers, after_buffers = received
    mark("trials received")
    try:
        model = model.to(device).eval()
    except BaseException as exc:  # noqa: B036
        return fail("load", exc)

    named_state = dict(model.named_parameters()) | dict(model.named_buffers())
    state = state_tensors(module, model, torch)
    state_before = {name: snapshot(t, torch) for name, t in state.items()}
    containers_before = {name: fingerprint(c) for name, c in state_containers(module, model, torch).items()}
    mark("candidate built")
    trials = [data_trial(data, i, device, torch) for i in range(len(data["trials"]))]
    mark("trials staged")
    default_trials = int(job.get("default_trials", len(trials)))
    # No global flag marks a checked call (deterministic mode, fill_uninitialized_memory): the timing run and
    # real use have none. What the candidate allocates in its forward is poisoned instead (poison_mode).
    poison = poison_mode(torch)
    watch = Watch(recorder, poison, baseline_threads, OpLog, live_threads)
    if device == "cuda":  # every launch and aten op of the candidate's must go to the stream it is called on
        recorder.stream = torch.cuda.current_stream().cuda_stream
    outputs: list[list[Any] | None] = []
    calls: list[dict[str, Any]] = []
    previous: list[tuple[Any, Any]] = []  # (output tensor, copy) of the last call

    def mutated() -> list[str]:  # the candidate's state a call changed: tensors (their storage) and containers
        return [name for name, t in state.items() if state_changed(t, state_before[name], torch)] + changed_containers(
            containers_before, state_containers(module, model, torch)
        )

    def guarded_call(
        label: str,
        trial: int,
        inputs: list[Any],
        buffers: list[Any] | None = None,
        grad: bool = False,
        inference: bool = False,
    ) -> bool:
        poison.finite = label == PLAIN
        if poison.finite:
            # the previous call's outputs, or where none came before this call's own inputs (as freed memory)
            poison.reuse_from(
                [copy for _, copy in previous] or [x.detach().clone() for x in inputs if isinstance(x, torch.Tensor)]
            )
        snapshot = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        record: dict[str, Any] = {"label": label, "trial": trial, "grad": grad, "inference": inference}
        try:
            with torch.inference_mode(inference), torch.set_grad_enabled(grad):
                with watch(record):
                    out = model(*inputs)
            if device == "cuda":
                torch.cuda.synchronize()
        except BaseException as exc:  # noqa: B036
            fail("run", exc)
            return False
        record |= {
            "output": describe_output(out, torch, inputs, named_state),
            "mutated_inputs": [
                i
                for i, (x, s) in enumerate(zip(inputs, snapshot, strict=True))
                if isinstance(x, torch.Tensor) and not same_values(x, s, torch)
            ],
            "mutated_state": mutated(),
            "clobbered_previous": any(not same_values(t, copy, torch) for t, copy in previous),
        }
        record["delivered"] = deliver(out, buffers)
        calls.append(record)
        plain = None if record["delivered"] else plain_outputs(out, torch)
        outputs.append(plain)
        previous.clear()
        if record["delivered"] or plain is not None:
            previous.extend((t, t.detach().clone()) for t in (list(out) if isinstance(out, (tuple, list)) else [out]))
        return True

    # exchange.call_plan: the default-shape trials, new contents written into the buffers the last call
    # used, the declared shape variants and transformed inputs, then trial 0 again, at new addresses, new
    # contents at new addresses after every other call (results must not depend on call count or on buffer
    # addresses), the parameters changed in place (results must follow the weights) and last replaced by new
    # objects holding the values sent (a kernel must not hold the old ones). Every other
    # call runs with autograd enabled (exchange.grad_enabled); the calls at new addresses run in train mode
    # and on inputs that require grad where the reference's outputs do not change so (evaluator.use_modes).
    # and one plain call (exchange.PLAIN) at a position drawn here, unknown to the candidate.
    restore: dict[str, Any] = {}
    modes = job.get("modes") or {}
    plan = call_plan(default_trials, len(trials), reweights is not None)
    # never right after the reweighted call: the parameters are the changed ones until the reassigned call,
    # and the plain call is judged against trial 0's reference, made with the sent ones
    slots = [at for at in range(len(plan) + 1) if at == 0 or plan[at - 1][0] != "reweighted"]
    plan = with_plain(plan, slots[secrets.randbelow(len(slots))])
    # One trial call with autograd disabled, drawn here, runs under torch.inference_mode on inference tensors,
    # as served models are called (x.is_inference() is True there and nowhere else).
    quiet = [c for c, (label, _) in enumerate(plan) if label == "trial" and not grad_enabled(c)]
    inference_at = quiet[secrets.randbelow(len(quiet))] if quiet else -1
    planned = 0  # the plan's calls so far: the evaluator's output buffers are per planned call
    for c, (label, trial) in enumerate(plan):
        if label == "reweighted":
            restore = set_state(model, reweights, torch)
            state_before.update({name: snapshot(t, torch) for name, t in state.items()})
        if label == "reassigned":  # new parameter objects holding the values sent at first, laid out as a module
            # converted by .to(memory_format=torch.channels_last) holds them (a kernel must read a conv weight by
            # its strides, or make it contiguous)
            model.load_state_dict({k: converted(v, torch) for k, v in restore.items()}, strict=True, assign=True)
            restore = {}
            named_state.clear()
            named_state.update(dict(model.named_parameters()) | dict(model.named_buffers()))
            state.clear()
            state.update(state_tensors(module, model, torch))
            state_before.clear()
            state_before.update({name: snapshot(t, torch) for name, t in state.items()})
            containers_before.clear()
            containers_before.update({n: fingerprint(x) for n, x in state_containers(module, model, torch).items()})
        if label in ("trial", "repeat", "reweighted", "reassigned"):
            inputs = trials[trial]
        elif label == "rewrite":
            inputs = trials[default_trials - 1]
            for dst, src in zip(inputs, trials[trial], strict=True):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(src)
        elif label in ("moved", PLAIN):
            inputs = [fresh_copy(x, torch) for x in trials[trial]]
        else:  # fresh
            inputs = [fresh_copy(x, torch) for x in data_trial(data, trial, device, torch)]
        buffers = None  # the plain call's outputs go through the outputs file
        if label != PLAIN:
            buffers = call_buffers[planned] if planned < len(call_buffers) else None
            planned += 1
        in_use = label in ("moved", "fresh")  # as modules are used: train mode, inputs that require grad
        if in_use and modes.get("requires_grad"):
            inputs = [
                x.requires_grad_(True) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs
            ]
            if label == "fresh":  # as a layer gets them in training: outputs of earlier ops, not leaves
                with torch.enable_grad():
                    inputs = [x * 1 if isinstance(x, torch.Tensor) and x.requires_grad else x for x in inputs]
        if c == inference_at:
            with torch.inference_mode():
                inputs = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        model.train(in_use and bool(modes.get("train")))
        called = guarded_call(label, trial, inputs, buffers, grad_enabled(c), c == inference_at)
        model.eval()
        if not called:
            return
        if c == 0:
            mark("first call")
    if restore:  # the state the evaluator sent, again, for the timing run and the calls after it
        set_state(model, restore, torch)
    mark("other calls")
    gradient_calls: list[dict[str, Any]] = []
    if job.get("gradients"):  # a training operator: forward and backward, each half under the op log
        gradient_calls = gradient_check(
            job["gradients"],
            model,
            lambda t: data_trial(data, t, device, torch),  # as sent (the rewrite call wrote into one of trials)
            reweights,
            poison,
            watch,
            mutated,
            candidate_path,
            torch,
        )
        if isinstance(gradient_calls, dict):  # the candidate raised in forward or backward
            channel.send({"phase": "correctness", "stage": "run", "error": gradient_calls})
            return
        jobfiles.save(
            [call.pop("grads") + call.pop("outputs") + call.pop("buffers") for call in gradient_calls],
            jobdir / "gradients.pt",
        )
        mark("gradients")
    spec_t = job["timing"]
    sources: list[list[Any]] = []
    rotated: list[list[Any]] = []
    if device == "cuda":
        # staged now, while the device is shared: the timing run's exclusive hold covers only the timing
        sources = [source_trial(data, i, device, torch) for i in range(default_trials)]
        rotated = [[fresh_copy(x, torch) for x in sources[0]] for _ in range(int(spec_t["rotate"]))]
        torch.cuda.synchronize()
        mark("timing inputs staged")
    channel.send({"phase": "ran"})  # done with the device until timed: writing the outputs is host work
    jobfiles.save(outputs, jobdir / "outputs.pt")
    mark("outputs saved")
    channel.send(
        {
            "phase": "correctness",
            "error": None,
            "stages": stages,
            "calls": calls,
            "gradient_calls": gradient_calls,
            "kernels": kernel_facts(recorder),
            "launch_signatures": {name: [list(a), k] for name, (a, k) in recorder.signatures.items()},
            "peak_bytes": torch.cuda.max_memory_allocated() if device == "cuda" else None,
        }
    )

    if channel.receive() != "time":
        return

    def prepare(i: int) -> list[Any]:
        # Fresh contents in rotated buffers before every trial (outside the timed region): a cache
        # keyed on addresses or on contents never hits.
        return refresh(rotated[i % len(rotated)], sources[i % len(sources)], i, torch)

    foreign_before = len(recorder.foreign)
    try:
        result = timing.time_cuda(model, prepare, trials=int(spec_t["trials"]), warmup=int(spec_t["warmup"]))
        trained = {"peak_bytes": timing.peak_bytes(model, prepare(0))}
        if spec_t.get("training"):
            trained |= train_timing(model, rotated, sources, spec_t, timing, torch)
    except BaseException as exc:  # noqa: B036
        channel.send({"phase": "timing", "error": classify(exc, candidate_path)})
        return
    channel.send(
        {
            "phase": "timing",
            "error": None,
            "median_ms": result.median_ms,
            "trials": result.trials,
            "min_ms": result.min_ms,
            "max_ms": result.max_ms,
            "event_span_ms": result.event_span_ms,
            "wall_ms": result.wall_ms,
            "plain_median_ms": result.plain_median_ms,
            "host_ms": result.host_ms,
            "mask_ms": result.mask_ms,
            "escaped": result.escaped,
            "foreign_streams": recorder.foreign[foreign_before:][:3],
            "kernels": kernel_facts(recorder),
        }
        | trained
    )
    # The same kernel, after all those calls, on known inputs (the parent judges these; the device is still
    # held exclusively until "after ran", so no one else times meanwhile)
    try:
        after: list[list[Any] | None] = []
        delivered: list[bool] = []
        for t, src in enumerate(sources[: int(job.get("after_trials", len(sources)))]):
            buf = rotated[t % len(rotated)]
            for dst, x in zip(buf, src, strict=True):
                if isinstance(dst, torch.Tensor):
                    dst.copy_(x)
            with torch.no_grad():
                out = model(*buf)
            torch.cuda.synchronize()
            delivered.append(deliver(out, after_buffers[t] if t < len(after_buffers) else None))
            after.append(None if delivered[-1] else plain_outputs(out, torch))
        regrads: list[dict[str, Any]] = []
        if spec_t.get("after_gradients"):  # and its backward, after the training steps timed
            checked = gradient_check(
                spec_t["after_gradients"],
                model,
                lambda t: data_trial(data, t, device, torch),
                None,
                poison,
                watch,
                mutated,
                candidate_path,
                torch,
            )
            if isinstance(checked, dict):
                channel.send({"phase": "after", "error": checked})
                return
            regrads = checked
        channel.send({"phase": "after ran"})  # on the host now: the device is free for the next timing run
        jobfiles.save(after, jobdir / "outputs_after_timing.pt")
        if regrads:
            jobfiles.save(
                [call.pop("grads") + call.pop("outputs") + call.pop("buffers") for call in regrads],
                jobdir / "gradients_after_timing.pt",
            )
    except BaseException as exc:  # noqa: B036
        channel.send({"phase": "after", "error": classify(exc, candidate_path)})
        return
    channel.send({"phase": "after", "error": None, "delivered": delivered, "gradient_calls": regrads})


def train_timing(
    model: Any, rotated: list[list[Any]], sources: list[list[Any]], spec_t: dict[str, Any], timing: Any, torch: Any
) -> dict[str, Any]:
    """A training operator's step (forward, then backward from fixed upstream gradients: timing.time_training),
    timed as the forward is, each step's inputs refreshed as the forward's are, and the step's peak memory."""
    result, peak = timing.time_training(
        model,
        [p for p in model.parameters() if p.requires_grad],
        rotated,
        trials=int(spec_t["trials"]),
        warmup=int(spec_t["warmup"]),
        refresh=lambda held, i: refresh(held, sources[i % len(sources)], i, torch),
    )
    return {
        "train_median_ms": result.median_ms,
        "train_host_ms": result.host_ms,
        "train_escaped": result.escaped,
        "train_peak_bytes": peak,
    }


def gradient_check(
    spec: list[dict[str, Any]],
    model: Any,
    inputs_of: Any,
    reweights: dict[str, Any] | None,
    poison: Any,
    watch: Watch,
    mutated: Any,
    candidate_path: str,
    torch: Any,
) -> list[dict[str, Any]] | dict[str, Any]:
    """The gradient calls of a training operator (evaluate/gradients.py), one per entry of `spec` (its trial,
    upstream seed and layout, whether the inputs are frozen, whether the parameters changed in place first and
    whether the module is in train mode): the candidate's gradients of its floating inputs (fresh copies in
    their layout) and parameters, the forward and the backward each recorded as a call is (launches, ops,
    violations, threads, poisoning) under the labels "gradient forward" and "backward"; the backward's record
    also names the upstream gradients or inputs it changed, the module state the call changed (`mutated()`)
    and any gradient that is not a plain tensor. Each entry's "grads" and "outputs" are CPU copies (an empty
    tensor where a gradient is None, listed in "missing"). A dict instead: the classified error of a forward or
    backward that raised."""
    from foundry.evaluate import gradients
    from foundry.evaluate.runtime_guard import VIOLATION_SUBCLASS

    out: list[dict[str, Any]] = []
    for setup in spec:
        trial = int(setup["trial"])
        records: list[dict[str, Any]] = []

        finite = bool(setup.get("finite"))

        def half(label: str, trial: int = trial, records: list[dict[str, Any]] = records, finite: bool = finite) -> Any:
            records.append({"label": label, "trial": trial})
            poison.finite = finite  # reused values (the call's inputs), as the plain call's allocations hold
            return watch(records[-1])

        @contextlib.contextmanager
        def backward(
            kept: list[tuple[str, Any]], half: Any = half, records: list[dict[str, Any]] = records
        ) -> Iterator[None]:
            before = [t.detach().clone() for _, t in kept]
            with half("backward"):
                yield
            records[-1]["mutated_inputs"] = [
                name for (name, t), b in zip(kept, before, strict=True) if not same_values(t.detach(), b, torch)
            ]

        sent = gradients.degenerate(inputs_of(trial), setup.get("degenerate"))
        inputs = gradients.with_grad(sent, bool(setup.get("frozen")), bool(setup.get("nonleaf")))
        if finite:
            poison.reuse_from([x.detach().clone() for x in inputs if isinstance(x, torch.Tensor)])
        frozen_params = set(setup.get("frozen_params") or [])
        thawed = [p for n, p in model.named_parameters() if n in frozen_params and p.requires_grad]
        second = setup.get("second")
        moved = bool(setup.get("reweighted")) and reweights
        restore = set_state(model, reweights, torch) if moved else {}  # as an optimizer step
        held = dict(model.named_buffers())
        tracked = [n for n in setup.get("buffer_names") or [] if n in held]  # train mode moves these (batch stats)
        kept_buffers = {n: held[n].detach().clone() for n in tracked}
        model.train(bool(setup.get("train")))
        for p in thawed:
            p.requires_grad_(False)
        refused = detached = None
        try:
            names, grads, outputs = gradients.compute(
                model,
                inputs,
                int(setup["seed"]),
                lambda: half("gradient forward"),
                backward,
                str(setup.get("layout", "dense")),
                float(setup.get("scale", 1.0)),
                setup.get("again"),
                second,
                setup.get("wanted"),
                tuple(setup["spread"]) if setup.get("spread") else None,
                holes=bool(setup.get("holes")),
                accumulate=setup.get("accumulate") or False,
                constant=bool(setup.get("constant")),
                second_layout=str(setup.get("second_layout") or "dense"),
                mask=setup.get("mask"),
                in_place=True,  # the reference's gradients are those of the same mask out of place
                modify=setup.get("modify"),
                unused=setup.get("unused"),
                quiet=setup.get("quiet") or False,
            )
        except gradients.DetachedSecondOrder as exc:  # judged by the evaluator: a silent zero second derivative
            detached = list(exc.names)
            names, grads, outputs = exc.first  # the first-order gradients built under create_graph: judged too
        except gradients.RefusedSecondOrder as exc:  # refused loudly, where the second backward reached it
            refused = f"{type(exc.cause).__name__}: {exc.cause}"[:300]
            names, grads, outputs = exc.first  # the first-order gradients built before it: judged
        except gradients.RefusedInPlace as exc:  # autograd's refusal of a change in place: loud, judged as such
            refused = f"{type(exc.cause).__name__}: {exc.cause}"[:300]
            names, grads, outputs = [], [], []
        except BaseException as exc:  # noqa: B036 - whatever the candidate raises is the verdict's
            forwarded = any(r.get("label") == "gradient forward" and "ops" in r for r in records)
            if second is not None and forwarded and isinstance(exc, Exception):  # double backward refused, loudly
                refused = f"{type(exc).__name__}: {exc}"[:300]
                names, grads, outputs = [], [], []
            else:
                error = classify(exc, candidate_path)
                error["message"] = f"gradient check (forward and backward on trial {trial}): {error['message']}"
                return error
        finally:
            model.eval()
            for p in thawed:
                p.requires_grad_(True)
        buffers = [held[n].detach().to("cpu", copy=True) for n in tracked]  # judged, then put back as sent
        with torch.no_grad():
            for n in tracked:
                held[n].copy_(kept_buffers[n])
        if restore:
            set_state(model, restore, torch)
        if refused is not None:  # the half that raised left no record to judge; those before it are judged
            records[:] = [r for r in records if "ops" in r]
        # only plain tensors are read here, outside the backward's op log: a subclass's own methods would run
        handed = [f"the gradient of {n} is a {type(g).__name__}" for n, g in zip(names, grads, strict=True)]
        handed = [h for h, g in zip(handed, grads, strict=True) if g is not None and type(g) is not torch.Tensor]
        records[-1]["violations"] = records[-1].get("violations", []) + [VIOLATION_SUBCLASS + h for h in handed]
        records[-1]["mutated_state"] = mutated()

        def copied(t: Any) -> Any:
            return t.detach().to("cpu", copy=True) if t is not None and type(t) is torch.Tensor else torch.empty(0)

        out.append(
            {
                "trial": trial,
                "names": names,
                "missing": [n for n, g in zip(names, grads, strict=True) if g is None],
                "records": records,
                "grads": [copied(g) for g in grads],
                "outputs": [copied(o) for o in outputs],
                "buffer_names": tracked,
                "buffers": buffers,
                "refused": refused,
                "detached": detached,
            }
        )
    return out


def compile_ahead(
    model_cls: Any, data: dict[str, Any], recorder: Any, torch: Any, module: types.ModuleType | None = None
) -> str | None:
    """Compile the candidate's kernels without touching the device: its forward on a meta-device model and
    meta tensors (the shapes, strides and dtypes of each trial shape), with every Triton launch turned into
    Triton's warmup (compile, no launch). The kernels the real calls then launch are already compiled when
    they specialize alike (meta tensors' addresses are 0, as aligned as the device's). Best effort: returns
    why it stopped, or None; whatever it did not compile, the real calls compile as before. Skipped for
    autotuned kernels (their tuning would time warmups) and for the interpreter (nothing to compile).
    module: the candidate module (a throwaway copy in the worker) whose kernels are checked for autotuning."""
    import triton.runtime.autotuner as autotuner

    def autotuned(value: Any) -> bool:
        for _ in range(4):  # @triton.heuristics and @triton.autotune wrap each other's .fn
            if isinstance(value, autotuner.Autotuner):
                return True
            value = getattr(value, "fn", None)
        return False

    shapes_seen: set[tuple[Any, ...]] = set()
    recorder.dry = True
    try:
        module = module or sys.modules.get("foundry_candidate")
        if module is None or any(autotuned(v) for v in list(vars(module).values())):
            return "autotuned"
        with torch.device("meta"):
            dry = model_cls(*data["init"]).eval()
        for inputs in data["trials"]:
            key = tuple((tuple(x.shape), x.stride(), x.dtype) if isinstance(x, torch.Tensor) else x for x in inputs)
            if key in shapes_seen:
                continue
            shapes_seen.add(key)
            meta = [
                torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
                if isinstance(x, torch.Tensor)
                else x
                for x in inputs
            ]
            with torch.no_grad():
                dry(*meta)
    except BaseException as exc:  # noqa: B036 - whatever the candidate does here is no verdict
        return type(exc).__name__
    finally:
        recorder.dry = False
    return None


def data_trial(data: dict[str, Any], index: int, device: str, torch: Any) -> list[Any]:
    """Trial `index`'s inputs as the parent sent them, strides included, in buffers of their own (on CPU,
    `.to` would alias buffers a call rewrote)."""
    return [layout_copy(x, device, torch) for x in data["trials"][index]]


def layout_copy(x: Any, device: str, torch: Any) -> Any:
    """x's values on device in a buffer of its own, with x's shape and strides: a non-contiguous view stays
    one (`.to` makes a view with gaps contiguous). The gaps of a floating tensor hold finite values like x's own
    (x's values in a random order: what the rest of a wider buffer holds in use, a padded row's neighbours), not
    NaN, which no real gap holds and a kernel could take for "not a column"; a kernel that reads them gets
    plausible wrong values. Other types' gaps hold the type's largest value."""
    if not isinstance(x, torch.Tensor):
        return x
    if x.is_contiguous() or x.numel() == 0 or any(s < 0 for s in x.stride()):
        return x.to(device, copy=True)
    extent = 1 + sum((n - 1) * s for n, s in zip(x.shape, x.stride(), strict=True))
    base = torch.empty(extent, dtype=x.dtype, device=device)
    if x.is_floating_point():
        values = x.detach().reshape(-1).to(device)
        values = values[torch.isfinite(values)] if not x.is_complex() else values
        if values.numel() == 0:
            values = torch.zeros(1, dtype=x.dtype, device=device)
        generator = torch.Generator(device="cpu").manual_seed(secrets.randbits(63))
        pick = torch.randint(0, values.numel(), (extent,), generator=generator).to(device)
        base.copy_(values[pick])
    else:
        poison_fill(base, torch)
    y = base.as_strided(x.shape, x.stride())
    y.copy_(x)
    return y


def converted(t: Any, torch: Any) -> Any:
    """A copy of `t` as Module.to(memory_format=torch.channels_last) leaves it: 4-d floating tensors channels-last,
    5-d ones channels-last-3d, the rest contiguous."""
    t = t.detach()
    if t.is_floating_point() and t.dim() == 4:
        return t.clone(memory_format=torch.channels_last)
    if t.is_floating_point() and t.dim() == 5:
        return t.clone(memory_format=torch.channels_last_3d)
    return t.clone()


def poison_fill(t: Any, torch: Any) -> Any:
    """Fill t with what no correct result holds where it was never written: NaN for floating point, the
    largest value of an integer type, True for booleans (as torch's fill_uninitialized_memory does)."""
    if t.is_floating_point() or t.is_complex():
        return t.fill_(float("nan"))
    if t.dtype is torch.bool:
        return t.fill_(True)
    return t.fill_(torch.iinfo(t.dtype).max)


def poison_mode(torch: Any) -> Any:
    """A dispatch mode, entered above the op log, that poisons (poison_fill) every tensor allocated
    uninitialized (torch.empty and its kin) during a checked call: an output the candidate leaves partly
    unwritten reads as NaN there, whatever memory the allocator handed back (a previous call's result
    included). The op log sees the allocation, not the fill. Reusable: one instance for all checked calls."""
    from torch.utils._python_dispatch import TorchDispatchMode, _disable_current_modes

    aten = torch.ops.aten
    allocators = {aten.empty, aten.empty_like, aten.empty_strided, aten.new_empty, aten.new_empty_strided}

    class Poison(TorchDispatchMode):
        # The plain call's allocations hold what memory holds in use: the values of the previous call's outputs
        # (the caching allocator hands back the block a result was just read from), or of the call's inputs
        # where none came before (reuse_from); integer and boolean memory likewise. Not zeros (fresh pages): a
        # kernel that accumulates into its uninitialised output is right on zeros and wrong in use.
        # Never a distribution of its own (normal values, half negative, were a tell no reused memory has).
        finite = False
        reused: list[Any] = []  # the previous call's outputs (copies), or empty: zeros

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            out = func(*args, **(kwargs or {}))
            if getattr(func, "overloadpacket", None) in allocators and type(out) is torch.Tensor:
                with _disable_current_modes():
                    if self.finite:
                        reuse_fill(out, self.reused, torch)
                    else:
                        poison_fill(out, torch)
            return out

        def reuse_from(self, outputs: list[Any]) -> None:
            """Set up the plain call: the values of `outputs`, or zeros where there are none."""
            self.reused = [t for t in outputs if isinstance(t, torch.Tensor) and t.numel() > 0]

    return Poison()


def reuse_fill(t: Any, reused: list[Any], torch: Any) -> Any:
    """Fill t as reused memory is filled: with the values of one of `reused` (repeated to t's size, in t's
    dtype), or zeros where there is none."""
    if t.numel() == 0:
        return t
    source = reused[secrets.randbelow(len(reused))] if reused else None
    if source is None:
        return t.zero_()
    flat = source.detach().reshape(-1).to(device=t.device, dtype=t.dtype)
    repeats = -(-t.numel() // flat.numel())
    return t.copy_(flat.repeat(repeats)[: t.numel()].view(t.shape))


class Watch:
    """Candidate code under the op log and the poison fill (`with watch(record):`); on a normal exit, what the
    runtime guard judges of it goes into `record`: launches, aten ops and their work, threads left running
    beyond the baseline, whether the fill was sensed, guard violations and launches to foreign streams. Made
    before any candidate code runs, with the op log's class and the thread census bound then."""

    def __init__(self, recorder: Any, poison: Any, baseline: set[Any], op_log: Any, live_threads: Any) -> None:
        self.recorder, self.poison, self.baseline = recorder, poison, baseline
        self.op_log, self.live_threads = op_log, live_threads

    @contextlib.contextmanager
    def __call__(self, record: dict[str, Any]) -> Iterator[None]:
        recorder = self.recorder
        log = self.op_log(recorder)
        before, violations, foreign = recorder.total, len(recorder.violations), len(recorder.foreign)
        with log, self.poison:
            yield
            poisoned = poisoning(self.poison)
        record |= {
            "launches": recorder.total - before,
            "ops": dict(log.ops),
            "work": dict(log.work),
            "threads": len(self.live_threads() - self.baseline),
            "poisoned": poisoned,
            "violations": recorder.violations[violations:],
            "foreign_streams": recorder.foreign[foreign:],
        }


def poisoning(mode: Any) -> bool:
    """Whether the poison mode is still in force (on the dispatch mode stack) as the candidate's call returns."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return any(m is mode for m in _get_current_dispatch_mode_stack())


def set_state(model: Any, values: dict[str, Any], torch: Any) -> dict[str, Any]:
    """Write values into the model's parameters and buffers in place (same tensors, same addresses, as an
    optimizer step does); returns what they held before."""
    held = model.state_dict(keep_vars=True)
    before = {}
    with torch.no_grad():
        for name, value in values.items():
            before[name] = held[name].detach().clone()
            held[name].copy_(value)
    return before


def receive_trials(
    job: dict[str, Any], jobdir: Path, channel: Channel, torch: Any
) -> tuple[list[list[Any]], dict[str, Any] | None, list[list[Any] | None], list[list[Any] | None]] | dict[str, Any]:
    """The trial inputs, once the candidate is built: the trials file (read and removed), and on a GPU the
    evaluator's device buffers (handed after "run"), which stand in for the file's placeholders; then, per
    call, the buffers its outputs go to. Also the state a reweighted call runs with (or None). A dict where
    the buffers did not open: the error that says so (no verdict on the candidate)."""
    from foundry.evaluate import jobfiles

    device = job["device"]
    sent = jobfiles.take_trials(jobdir, mapped=device == "cuda")
    trials, reweights = sent["trials"], sent.get("reweighted")
    shared = job.get("exchange")
    if not shared:
        return trials, reweights, [], []
    from foundry.evaluate import exchange

    fds: list[int] = []
    try:
        fds = channel.receive_fds(int(shared["fds"]))
        for trial, descs in zip(trials, shared["inputs"], strict=True):
            for i, desc in enumerate(descs):
                if desc is not None:
                    trial[i] = exchange.open_shared(desc, fds)
        calls = [[exchange.open_shared(d, fds) for d in call] for call in shared["calls"]]
        after = [[exchange.open_shared(d, fds) for d in call] for call in shared["after"]]
    except Exception as exc:  # no verdict on the candidate: the evaluator sends files from then on
        why = f"the evaluator's device buffers did not open in the worker: {type(exc).__name__}: {exc}"
        return jobfiles.no_verdict("exchange_failed", why)
    finally:  # the mappings keep the buffers; no descriptor is left for candidate code to find
        for fd in fds:
            os.close(fd)
    return trials, reweights, calls, after


def source_trial(data: dict[str, Any], index: int, device: str, torch: Any) -> list[Any]:
    """Trial `index`'s inputs to copy from, never passed to the candidate: the evaluator's shared device buffers
    as they are (no second copy of every default trial on the device), anything else copied there."""
    return [
        x.to(device, copy=True) if isinstance(x, torch.Tensor) and x.device.type != "cuda" else x
        for x in data["trials"][index]
    ]


CONTAINERS = (list, dict, set, frozenset, tuple, bytearray)


SCALARS = (bool, int, float, complex, str, bytes)
ITERATORS = (
    types.GeneratorType,
    types.AsyncGeneratorType,
    types.CoroutineType,
    Iterator,
)
STATE_DEPTH = 8  # levels of containers, objects, functions and closures the state scan enters
STATE_FANOUT = 4096  # items of one container it enters (and fingerprints)
STATE_BUDGET = 50000  # objects it visits in all


def reachable(module: Any, model: Any, torch: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Everything the candidate could keep state in, by a path name: (tensors, containers and scalars). From its
    modules' attributes (private ones too: only `training`, which the worker sets, is left out; parameters and
    buffers by name) and its module's globals, into containers (lists, tuples, dicts, sets, bytearrays, nested
    up to STATE_DEPTH), instances of its own classes and SimpleNamespaces, its classes' attributes, its functions'
    defaults, attributes and closure cells, functools.partial arguments, other nn.Modules it holds, and a state
    tensor's own attributes and .grad. A scalar counts where it is an attribute, default or closure value (one
    inside a container is part of that container's fingerprint). Bounded (STATE_FANOUT items of a container,
    STATE_BUDGET objects); libraries' callables (triton's kernels, whose caches fill as they compile) are not entered,
    and of other libraries' objects (a triton.Config, a tl.constexpr) the tensors they hold and the scalars they have as
    attributes count."""
    import collections
    import functools

    tensors: dict[str, Any] = {}
    held: dict[str, Any] = {}
    seen: set[int] = set()
    budget = [STATE_BUDGET]
    own = getattr(module, "__name__", None)

    def ours(obj: Any) -> bool:
        return own is not None and getattr(obj, "__module__", None) == own

    def items(value: Any) -> list[tuple[Any, Any]]:
        if isinstance(value, dict):
            return [(k, v) for k, v in list(value.items())[:STATE_FANOUT]]
        if isinstance(value, (bytearray,)):
            return []
        return list(enumerate(list(value)[:STATE_FANOUT]))

    def attributes(name: str, obj: Any, depth: int) -> None:
        for key, value in list(vars(obj).items()):
            visit(f"{name}.{key}", value, depth + 1, True)

    def visit(name: str, value: Any, depth: int, top: bool) -> None:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        if isinstance(value, torch.Tensor):
            if id(value) in seen:
                return
            seen.add(id(value))
            tensors[name] = value
            if value.is_leaf and value.grad is not None:
                visit(f"{name}.grad", value.grad, depth + 1, False)
            for key, attr in list(getattr(value, "__dict__", {}).items()):
                visit(f"{name}.{key}", attr, depth + 1, True)
            return
        if isinstance(value, SCALARS) or value is None:
            if top and value is not None:
                held[name] = value
            return
        if depth >= STATE_DEPTH or id(value) in seen or isinstance(value, types.ModuleType):
            return
        if isinstance(value, CONTAINERS) or isinstance(value, collections.deque):
            seen.add(id(value))
            held[name] = value
            for key, item in items(value):
                visit(f"{name}[{key!r}]", item, depth + 1, False)
            return
        if isinstance(value, torch.nn.Module):
            seen.add(id(value))
            component(name, value, depth)
            return
        if isinstance(value, ITERATORS) and not ours(type(value)):  # a one-pass iterator: a counter with no write
            seen.add(id(value))
            held[name] = value
            return
        fn = getattr(value, "__func__", value)  # a staticmethod's, classmethod's or bound method's function
        if isinstance(fn, types.FunctionType):
            if not ours(fn) or id(fn) in seen:
                return
            seen.add(id(fn))
            for i, default in enumerate(fn.__defaults__ or ()):
                visit(f"{name} default {i}", default, depth + 1, True)
            for key, default in (fn.__kwdefaults__ or {}).items():
                visit(f"{name} default {key}", default, depth + 1, True)
            attributes(name, fn, depth)
            for i, cell in enumerate(fn.__closure__ or ()):
                try:
                    contents = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                visit(f"{name} closure {i}", contents, depth + 1, True)
            return
        if isinstance(value, functools.partial):
            seen.add(id(value))
            visit(f"{name}.func", value.func, depth + 1, False)
            visit(f"{name}.args", value.args, depth + 1, False)
            visit(f"{name}.keywords", value.keywords, depth + 1, False)
            return
        if isinstance(value, type):
            if ours(value):
                seen.add(id(value))
                for key, attr in list(vars(value).items()):
                    if not key.startswith("__"):
                        visit(f"{name}.{key}", attr, depth + 1, True)
            return
        if isinstance(value, types.SimpleNamespace) or (ours(type(value)) and hasattr(value, "__dict__")):
            seen.add(id(value))
            attributes(name, value, depth)
        elif hasattr(value, "__dict__") and not kernel(value):  # another library's object (a triton.Config): the
            library(name, value, depth)  # tensors it holds and its scalar attributes, not its containers' bookkeeping

    def kernel(value: Any) -> bool:  # triton's kernels, heuristics and autotuners: their caches fill as they compile
        jit = sys.modules.get("triton.runtime.jit")
        interface = getattr(jit, "KernelInterface", None)
        return (interface is not None and isinstance(value, interface)) or (
            callable(value) and type(value).__module__.startswith("triton.runtime")
        )

    def library(name: str, value: Any, depth: int) -> None:
        if budget[0] <= 0 or depth >= STATE_DEPTH:
            return
        budget[0] -= 1  # (the first call's object is counted twice: visit counted it)
        if isinstance(value, torch.Tensor):
            if id(value) not in seen:
                seen.add(id(value))
                tensors[name] = value
            return
        if isinstance(value, (dict, list, tuple, set, frozenset)):
            for key, item in items(value):
                library(f"{name}[{key!r}]", item, depth + 1)
        elif hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType)) and id(value) not in seen:
            seen.add(id(value))
            for key, item in list(vars(value).items()):
                if isinstance(item, SCALARS):  # a number kept as its attribute (a constexpr's value) counts too
                    held[f"{name}.{key}"] = item
                else:
                    library(f"{name}.{key}", item, depth + 1)

    def component(prefix: str, sub: Any, depth: int) -> None:
        dot = prefix + "." if prefix else ""
        for key, value in list(vars(sub).items()):
            if key in ("training", "_modules"):
                continue
            if key in ("_parameters", "_buffers"):
                held[f"{dot}{key}"] = value  # a parameter rebound to another tensor changes its identities
                for name, t in value.items():
                    visit(f"{dot}{name}", t, depth + 1, False)
            else:
                visit(f"{dot}{key}", value, depth + 1, True)
        for key, child in list(vars(sub).get("_modules", {}).items()):
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                component(f"{dot}{key}", child, depth + 1)

    seen.add(id(model))
    component("", model, 0)
    for key, value in list(vars(module).items()):
        if not key.startswith("__"):
            visit(f"module.{key}", value, 0, True)
    return tensors, held


def state_containers(module: Any, model: Any, torch: Any) -> dict[str, Any]:
    """What the candidate could keep state in besides tensors, read anew at each call (a rebound scalar is a
    new object): mutable containers at any depth reachable() enters and scalars held as attributes, defaults or
    closure values."""
    return reachable(module, model, torch)[1]


def changed_containers(before: dict[str, Any], containers: dict[str, Any]) -> list[str]:
    """The names of state_containers whose fingerprint differs from `before`, appeared or went away."""
    now = {name: fingerprint(c) for name, c in containers.items()}
    return sorted(name for name in before.keys() | now.keys() if before.get(name) != now.get(name))


def fingerprint(container: Any) -> tuple[Any, ...]:
    """The container's length and what it holds: scalars by value, anything else by identity (a dict's keys and
    values: its items() are new tuples every time, whose identities would differ with nothing changed; nested
    containers have fingerprints of their own); a bytearray's bytes; a scalar's value."""
    if isinstance(container, SCALARS):
        return (type(container).__name__, repr(container)[:256])
    if isinstance(container, bytearray):
        return ("bytearray", len(container), hash(bytes(container)))
    if isinstance(container, ITERATORS):
        return ("iterator", type(container).__name__, iterator_state(container, 0))

    def held(x: Any) -> Any:
        return ("=", type(x).__name__, repr(x)[:256]) if isinstance(x, SCALARS) or x is None else id(x)

    if isinstance(container, dict):
        contents = [held(x) for pair in list(container.items())[:STATE_FANOUT] for x in pair]
    else:
        contents = [held(x) for x in list(container)[:STATE_FANOUT]]
    return (type(container).__name__, len(container), hash(tuple(contents)))


def iterator_state(it: Any, depth: int) -> tuple[Any, ...]:
    """Where an iterator stands, read without advancing it: a generator's position and locals, a builtin
    iterator's pickling state (enumerate's count, a range or list iterator's index; nested iterators in it
    likewise) and its length hint."""
    import operator

    if isinstance(it, types.GeneratorType):
        frame = it.gi_frame
        if frame is None:
            return ("finished",)

        def local(v: Any) -> Any:  # a generator's locals are its state, as a closure's cells are
            if isinstance(v, ITERATORS) and v is not it and depth < 4:
                return iterator_state(v, depth + 1)
            if isinstance(v, (*CONTAINERS, *SCALARS)):
                return fingerprint(v)
            return ("object", id(v))

        return ("generator", frame.f_lasti, tuple((k, local(v)) for k, v in list(frame.f_locals.items())[:64]))

    def flat(x: Any, level: int) -> Any:
        if isinstance(x, ITERATORS) and x is not it and depth + level < 4:
            return iterator_state(x, depth + 1)
        if isinstance(x, (tuple, list)) and level < 3:
            return tuple(flat(y, level + 1) for y in list(x)[:8])
        if isinstance(x, SCALARS) or x is None:
            return repr(x)[:64]
        return type(x).__name__

    try:
        reduced = it.__reduce__()
    except Exception:  # noqa: BLE001 - an iterator that cannot be pickled: its length hint only
        reduced = None
    try:
        hint = operator.length_hint(it, -1)
    except Exception:  # noqa: BLE001
        hint = -1
    return ("state", hint, flat(reduced, 0))


def refresh(buffers: list[Any], source: list[Any], i: int, torch: Any) -> list[Any]:
    for dst, src in zip(buffers, source, strict=True):
        if isinstance(dst, torch.Tensor):
            if dst.is_floating_point():
                torch.add(src, (i % 1024 + 1) * 2.0**-12, out=dst)
            else:
                dst.copy_(src)
    return buffers


def state_tensors(module: Any, model: Any, torch: Any) -> dict[str, Any]:
    """Every tensor the candidate could keep state in (reachable()): parameters, buffers (persistent or not),
    tensor attributes of its modules (private ones included), module-level tensors, tensors in containers at any
    depth, in its objects, function defaults and closures, and class attributes. Forward must leave all of them
    unchanged: their whole storage (snapshot)."""
    return reachable(module, model, torch)[0]


def snapshot(t: Any, torch: Any) -> tuple[Any, ...]:
    """A state tensor as it is: its shape, strides and offset, and a copy of the bytes of its whole storage (a
    view's storage beyond the view included: a kernel may write past the end of what a parameter shows)."""
    t = t.detach()
    try:
        raw = torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())
        data = raw.clone()
    except Exception:  # a tensor without a plain storage: its values
        data = t.clone()
    return (tuple(t.shape), tuple(t.stride()), t.storage_offset(), data)


def state_changed(t: Any, before: tuple[Any, ...], torch: Any) -> bool:
    now = snapshot(t, torch)
    if now[:3] != before[:3] or now[3].shape != before[3].shape or now[3].dtype != before[3].dtype:
        return True
    return not same_values(now[3], before[3], torch)


def same_values(a: Any, b: Any, torch: Any) -> bool:
    if a.is_floating_point():
        return bool(torch.equal(a.nan_to_num(0.5), b.nan_to_num(0.5)))
    return bool(torch.equal(a, b))


def shapes(inputs: list[Any], torch: Any) -> list[Any]:
    return [tuple(x.shape) if isinstance(x, torch.Tensor) else x for x in inputs]


def kernel_facts(recorder: Any) -> list[dict[str, Any]]:
    facts = []
    for name, kernel in recorder.compiled.items():
        meta = getattr(kernel, "metadata", None)
        facts.append(
            {
                "name": name,
                "registers": safe_int(kernel, "n_regs"),
                "spills": safe_int(kernel, "n_spills"),
                "shared_bytes": getattr(meta, "shared", None),
                "num_warps": getattr(meta, "num_warps", None),
                "num_stages": getattr(meta, "num_stages", None),
                "target": str(getattr(meta, "target", "")),
            }
        )
    return facts


def safe_int(obj: Any, attr: str) -> int | None:
    try:
        value = getattr(obj, attr)
    except Exception:  # handles not yet loaded: facts are optional
        return None
    return int(value) if isinstance(value, int) else None


def warm_up(torch: Any) -> None:
    """A warm worker pays, before it has a job, the one-time costs a process's first calls would: loading
    a Triton kernel and launching it, the device's allocations, copies and comparisons, and empty tensors
    filled under deterministic mode (as the guarded calls run). Nothing here touches a candidate or its
    data; the flags are set back."""
    import triton
    import triton.language as tl

    @triton.jit
    def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)

    deterministic = torch.are_deterministic_algorithms_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        x = torch.randn(4096, device="cuda")
        out = torch.empty_like(x)
        double[(4,)](x, out, x.numel(), BLOCK=1024)
        torch.cuda.synchronize()
        torch.equal(out.nan_to_num(0.5), (x * 2).nan_to_num(0.5))
        x.clone().to("cpu", copy=True)
    except Exception:  # only a head start: the job's own calls pay whatever this did not
        pass
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.utils.deterministic.fill_uninitialized_memory = fill


def main() -> None:
    from foundry.evaluate import sandbox

    sandbox.drop_capabilities()  # first, while this is the only thread (the parent dropped them too)
    channel = Channel(int(sys.argv[2]), int(sys.argv[3]))
    if sys.argv[1] == "-":
        # Warm start: pay for the heavy imports (and the CUDA context) while the previous candidate
        # runs, then wait for the parent to name the job.
        import torch
        import triton  # noqa: F401

        from foundry.evaluate import runtime_guard, timing  # noqa: F401

        if os.environ.get("FOUNDRY_WARM_DEVICE") == "cuda":
            torch.cuda.init()
            warm_up(torch)
        line = channel.receive()
        if not line.startswith("job "):
            return
        where, _, expected = line[4:].rpartition(" ")  # "job DIR DIGEST" ("-": no digest)
        jobdir, expected = Path(where), expected.strip("-")
        os.chdir(jobdir)  # where a cold worker starts: relative paths mean the same in both
    else:
        jobdir = Path(sys.argv[1])
        expected = sys.argv[4] if len(sys.argv) > 4 else ""
    from foundry.evaluate import jobfiles, landlock

    # Before the job is read or any candidate code runs: Landlock (where the evaluator asks for it), then the
    # second seccomp stage (no sockets, no metadata changes), which the driver's set-up may need to be without.
    if os.environ.get("FOUNDRY_WARM_DEVICE") == "cuda":
        # the driver's first call fails under Landlock (error 304 on the H200 machine, even with only the
        # file rules of ABI 1): the device is opened first, as a warm worker already has
        try:
            import torch

            torch.cuda.init()
        except Exception as exc:  # no verdict on the candidate: its process found no usable GPU
            why = f"the candidate's process could not open the GPU: {type(exc).__name__}: {exc}"
            channel.send({"phase": "correctness", "stage": "load", "error": jobfiles.no_verdict("device_failed", why)})
            return
    try:
        landlock.confine(jobdir, files=landlock.requested())
    except OSError as exc:
        error = jobfiles.no_verdict("sandbox_failed", landlock.failure(exc))
        channel.send({"phase": "correctness", "stage": "load", "error": error})
        return

    try:
        source, settings = jobfiles.read_checked(jobdir, ("candidate.py", "job.json"), expected)
    except jobfiles.JobChanged as exc:
        channel.send({"phase": "correctness", "stage": "load", "error": exc.error()})
        return
    job = json.loads(settings)
    if not job.get("processes", False):  # the interpreter starts no compiler: no process of the candidate's either
        from foundry.evaluate import seccomp

        try:
            seccomp.forbid_processes()
        except OSError as exc:
            error = jobfiles.no_verdict("sandbox_failed", landlock.failure(exc))
            channel.send({"phase": "correctness", "stage": "load", "error": error})
            return
    try:
        run(job, jobdir, channel, source.decode())
    except BaseException as exc:  # noqa: B036 - whatever happens becomes a message
        channel.send({"phase": "error", "error": classify(exc, str(jobdir / "candidate.py"))})
    sys.stdout.flush()
    sys.stderr.flush()
    # Everything is said (the channel is unbuffered) and written: skip the interpreter's teardown (torch's
    # finalizers, whatever threads the candidate left), which took about a second of each evaluation on the
    # H200 while the evaluator waited to reap this process before freeing the buffers it shared.
    os._exit(0)


if __name__ == "__main__":
    main()
