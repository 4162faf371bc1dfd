"""Worker-side runtime guard: log the aten ops a candidate's forward runs outside Triton, and count
Triton launches. Imports only torch and triton (this runs inside the untrusted child)."""

from __future__ import annotations

import collections
import threading
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

# torch's own tensor classes; a kernel argument of any other subclass runs candidate methods unobserved
PLAIN_TENSOR_TYPES = tuple(
    t for t in (torch.Tensor, torch.nn.Parameter, getattr(torch.nn.parameter, "Buffer", None)) if t is not None
)


class LaunchRecorder:
    """Wraps the run() of Triton's JITFunction (and the interpreter's InterpretedFunction) so every
    kernel[grid](...) launch is counted and its compiled metadata kept. Ops that run inside a launch
    (the interpreter copies arguments to host) are not the candidate's."""

    def __init__(self) -> None:
        self.launches: collections.Counter[str] = collections.Counter()
        self.compiled: dict[str, Any] = {}
        self.signatures: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self.functions: dict[str, Any] = {}
        self.violations: list[str] = []  # tensor subclasses passed to kernels (their methods run unlogged)
        # The stream the harness calls the candidate on (CUDA only): a launch or an aten op on another one
        # escapes the timed stream, whose events then time only what stayed on it.
        self.stream: int | None = None
        self.foreign: list[str] = []
        self.depth = 0
        self.dry = False  # compile-ahead pass (worker.compile_ahead): launches only compile, nothing runs
        self.installed: list[tuple[type, Any]] = []

    def install(self) -> None:
        from triton.runtime.jit import JITFunction

        classes: list[type] = [JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction

            classes.append(InterpretedFunction)
        except ImportError:  # pragma: no cover - every supported triton has it
            pass
        for cls in classes:
            original = cls.run
            self.installed.append((cls, original))
            cls.run = self.wrap(original)

    def wrap(self, original: Any) -> Any:
        recorder = self

        def run(fn_self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            if recorder.dry:
                return original(fn_self, *args, grid=grid, warmup=True, **kwargs)
            name = getattr(fn_self, "__name__", None) or getattr(getattr(fn_self, "fn", None), "__name__", "kernel")
            for value in list(args) + list(kwargs.values()):
                if isinstance(value, torch.Tensor) and type(value) not in PLAIN_TENSOR_TYPES:
                    recorder.violations.append(f"{name}: argument of type {type(value).__qualname__}")
            if callable(grid):
                grid = recorder.outside(grid)  # the grid function is the candidate's code: log its ops
            recorder.depth += 1
            try:
                result = original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                recorder.depth -= 1
            if not warmup:
                recorder.check_stream(name)
                recorder.launches[name] += 1
                if name not in recorder.signatures:
                    recorder.signatures[name] = (describe_args(args), describe_kwargs(kwargs))
                    recorder.functions[name] = fn_self
                if result is not None and hasattr(result, "metadata"):
                    recorder.compiled[name] = result
            return result

        return run

    def check_stream(self, what: str) -> None:
        if self.stream is not None:
            current = torch.cuda.current_stream().cuda_stream
            if current != self.stream:
                self.foreign.append(f"{what} on stream {current:#x}, not the caller's {self.stream:#x}")

    def outside(self, fn: Any) -> Any:
        recorder = self

        def call(*args: Any, **kwargs: Any) -> Any:
            depth, recorder.depth = recorder.depth, 0
            try:
                return fn(*args, **kwargs)
            finally:
                recorder.depth = depth

        return call

    @property
    def total(self) -> int:
        return sum(self.launches.values())


def describe_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(f"tensor:{a.dtype}" if isinstance(a, torch.Tensor) else a for a in args)


def describe_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: (f"tensor:{v.dtype}" if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}


def op_name(func: Any) -> str:
    """aten.add.Tensor → add"""
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func)
    return name.split(".")[-1]


class OpLog(TorchDispatchMode):
    """Counts aten ops run during the candidate's forward, outside Triton launches. Records dtype
    changes of copies so a cast (a precision trick) is not mistaken for a layout op."""

    def __init__(self, recorder: LaunchRecorder) -> None:
        super().__init__()
        self.recorder = recorder
        self.ops: collections.Counter[str] = collections.Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.recorder.depth == 0:
            name = op_name(func)
            self.recorder.check_stream(f"aten.{name}")
            if name in {"_to_copy", "copy_", "to", "clone"} and changes_dtype(args, out):
                name = f"{name}[dtype]"
            self.ops[name] += 1
        return out


def changes_dtype(args: tuple, out: Any) -> bool:
    src = next((a for a in args if isinstance(a, torch.Tensor)), None)
    if isinstance(out, torch.Tensor) and src is not None:
        if len(args) > 1 and isinstance(args[1], torch.Tensor) and out is args[0]:  # copy_(dst, src)
            return args[0].dtype != args[1].dtype
        return out.dtype != src.dtype
    return False


def live_threads() -> frozenset[threading.Thread]:
    """The threads alive now, by identity: one that ended and a new one that started in its place are not
    the same count."""
    return frozenset(threading.enumerate())
