"""Worker-side runtime guard: log the torch ops a candidate's forward runs outside Triton, count Triton
launches, and notice when candidate code tampers with either. Imports only torch and triton (this runs inside
the untrusted child).

What is exempt: only the interpreter's own argument copies (GridExecutor copying a launch's tensors to the
host and back), and only the copy ops those copies are made of. Everything else that runs during a launch is
the candidate's and is logged: the grid function, pre-run hooks, Triton's launch hooks, autotune hooks,
heuristics functions and, under the interpreter, the kernel body's Python.

What counts as tampering or registration (each check runs when the op log of a call closes, so registrations
made at import or in __init__ are caught at the first call): the patched methods replaced, the op log no longer
the only dispatch mode, a torch function mode active around the call, Triton's launch or compile hooks changed,
torch operators registered (a new name, or a new kernel for an op the call ran) since the guard was installed,
a kernel launched with a pre-run hook; and what the witness (torch's C++ profiler through the call) saw that the
log and the launch counts do not account for."""

from __future__ import annotations

import collections
import functools
import logging
import threading
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack, _pop_mode

log = logging.getLogger(__name__)
# torch's own tensor classes; a kernel argument of any other subclass runs candidate methods unobserved
PLAIN_TENSOR_TYPES = tuple(
    t for t in (torch.Tensor, torch.nn.Parameter, getattr(torch.nn.parameter, "Buffer", None)) if t is not None
)
# Namespaces whose ops may match an entry of rules/runtime.yaml. Honest candidates' forwards (allocation, views,
# copies, the interpreter's argument copies) reach the dispatcher as aten ops only, on CPU and CUDA alike
# (prims appear only when torch decomposes, which eager mode does not); any other namespace is the candidate's
# own op or a library's, and is never taken for an allowed aten op of the same name.
RULE_NAMESPACES = frozenset({"aten"})
# What the interpreter's argument copies are made of (GridExecutor._init_args_hst and _restore_args_dev).
INTERPRETER_COPY_OPS = frozenset({"new_empty", "set_", "empty", "copy_", "_to_copy", "empty_strided"})
EXEMPT_RANGE = "foundry.interpreter_copies"  # the profiler range around each of the interpreter's copies
VIOLATION_TAMPER = "tamper: "
VIOLATION_REGISTERED = "registered: "
VIOLATION_SUBCLASS = "subclass: "  # candidate code handed the worker a tensor subclass (a gradient)


def op_identity(func: Any) -> str:
    """The fully qualified name of an op as the dispatcher sees it: aten.add.Tensor, mylib.empty.default."""
    namespace = getattr(func, "namespace", None)
    name = getattr(func, "__name__", None)
    if isinstance(namespace, str) and isinstance(name, str):
        return f"{namespace}.{name}"
    return f"unknown.{func}"  # not an OpOverload: never an allowed op


# Composite ops that reach the op log whole under torch.inference_mode (elsewhere autograd's dispatch decomposes
# them first): judged as the library op they decompose into.
INFERENCE_COMPOSITES = {
    **{f"conv{d}d": "convolution" for d in (1, 2, 3)},
    **{f"conv_transpose{d}d": "convolution" for d in (1, 2, 3)},
    "linear": "addmm",
    "pad": "constant_pad_nd",
    "argsort": "sort",
    "msort": "sort",
    "take_along_dim": "gather",
    "tile": "repeat",
    **{name: "cat" for name in ("hstack", "vstack", "dstack", "column_stack", "row_stack")},
    "fliplr": "flip",
    "flipud": "flip",
}
# Overloads and flags that make a data-movement op a reducing one: judged under their own name (scatter_[reduce],
# index_put_[accumulate]), granted only where the reference runs them so.
REDUCING_OVERLOADS = frozenset({"reduce", "value_reduce", "two"})


def rule_name(identity: str) -> str | None:
    """The rules/runtime.yaml key an op identity is judged under: aten.add.Tensor → add,
    aten._to_copy.default[dtype] → _to_copy[dtype], aten.conv2d.default → convolution (INFERENCE_COMPOSITES);
    None for any namespace but aten (a custom op named like an allowed aten op is still not allowed)."""
    base, bracket, suffix = identity.partition("[")
    parts = base.split(".")
    if len(parts) != 3 or parts[0] not in RULE_NAMESPACES or not parts[1]:
        return None
    return INFERENCE_COMPOSITES.get(parts[1], parts[1]) + (bracket + suffix if bracket else "")


def describe_violations(violations: list[str]) -> tuple[str, str]:
    """(rule, message) for a call's violations: tampering first, then registrations, then tensor subclasses
    returned, then tensor subclasses given to kernels."""
    tampered = [v.removeprefix(VIOLATION_TAMPER) for v in violations if v.startswith(VIOLATION_TAMPER)]
    if tampered:
        return "guard_tampered", "candidate code tampered with the runtime guard: " + "; ".join(tampered[:3])
    registered = [v.removeprefix(VIOLATION_REGISTERED) for v in violations if v.startswith(VIOLATION_REGISTERED)]
    if registered:
        return "registration", "candidate code registered ops or hooks: " + "; ".join(registered[:3])
    handed = [v.removeprefix(VIOLATION_SUBCLASS) for v in violations if v.startswith(VIOLATION_SUBCLASS)]
    if handed:
        return "tensor_subclass_result", "candidate code returned a tensor subclass (its methods would run where " + (
            "nothing observes them): " + "; ".join(handed[:3])
        )
    return "tensor_subclass_argument", "a kernel was given a tensor subclass (its methods run unobserved): " + (
        "; ".join(violations[:3])
    )


def triton_hooks() -> dict[str, tuple[int, ...]]:
    """Every launch and compile hook Triton offers, by identity (the knobs of triton >= 3.4, and the class
    attributes older releases kept)."""
    found: dict[str, tuple[int, ...]] = {}
    try:
        import triton.knobs as knobs

        for name in dir(knobs.runtime):
            if name.endswith("hook"):
                value = getattr(knobs.runtime, name, None)
                found[f"knobs.runtime.{name}"] = (id(value), *(id(c) for c in getattr(value, "calls", ()) or ()))
    except ImportError:  # pragma: no cover - every supported triton has knobs
        pass
    from triton.runtime.jit import JITFunction

    for name in ("cache_hook", "compiled_hook"):
        if hasattr(JITFunction, name):
            found[f"JITFunction.{name}"] = (id(getattr(JITFunction, name)),)
    return found


class Registry:
    """torch's operator registry as it was when the guard was installed: every op's name and a digest of its
    dispatch table (a Python kernel registered for aten::empty_like changes the table, not the name)."""

    def __init__(self) -> None:
        # torch registers ops of its own when it first imports inductor, which its profiler (the witness) and
        # torch.use_deterministic_algorithms do on first use: imported here, so those ops are in the baseline
        # (the import is paid once per worker either way)
        import torch._inductor  # noqa: F401

        # CUDA's lazy initialization registers torch's own triton:: sparse ops (seen on the H100 machine, torch
        # 2.11): the device is opened first, so they are in the baseline rather than a registration in the first
        # call (a worker that checks on a GPU opens it anyway; under Landlock it already has)
        if torch.cuda.is_available() and not torch.cuda.is_initialized():
            torch.cuda.init()
        self.tables = {name: self.table(name) for name in torch._C._dispatch_get_all_op_names()}

    @staticmethod
    def table(name: str) -> int:
        return hash(torch._C._dispatch_dump(name))

    def changes(self, seen: set[str]) -> list[str]:
        """New ops (any namespace) and the ops seen in a call whose kernels changed."""
        names = set(torch._C._dispatch_get_all_op_names())
        found = [f"new op {n}" for n in sorted(names - self.tables.keys())[:5]]
        for name in sorted(seen):
            if name in self.tables and self.table(name) != self.tables[name]:
                found.append(f"new kernel for {name}")
        return found


class LaunchRecorder:
    """Wraps the run() of Triton's JITFunction (and the interpreter's InterpretedFunction) so every
    kernel[grid](...) launch is counted and its compiled metadata kept, and the interpreter's argument copies
    so those (and only those) are not taken for the candidate's ops."""

    def __init__(self) -> None:
        self.launches: collections.Counter[str] = collections.Counter()
        self.compiled: dict[str, Any] = {}
        self.signatures: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
        self.functions: dict[str, Any] = {}
        self.violations: list[str] = []  # tensor subclasses passed to kernels, tampering, registrations
        # The stream the harness calls the candidate on (CUDA only): a launch or an aten op on another one
        # escapes the timed stream, whose events then time only what stayed on it.
        self.stream: int | None = None
        self.foreign: list[str] = []
        self.exempt = 0  # inside the interpreter's argument copies
        self.dry = False  # compile-ahead pass (worker.compile_ahead): launches only compile, nothing runs
        self.installed: list[tuple[type, Any]] = []  # (class, its original run)
        self.patched: list[tuple[type, str, Any, Any]] = []  # (class, attribute, original, wrapper)
        self.hooks: dict[str, tuple[int, ...]] = {}
        self.registry: Registry | None = None

    def install(self) -> None:
        from triton.runtime.jit import JITFunction

        classes: list[type] = [JITFunction]
        try:
            from triton.runtime.interpreter import GridExecutor, InterpretedFunction

            classes.append(InterpretedFunction)
            for attr in ("_init_args_hst", "_restore_args_dev"):
                if hasattr(GridExecutor, attr):
                    self.patch(GridExecutor, attr, self.copies(getattr(GridExecutor, attr)))
        except ImportError:  # pragma: no cover - every supported triton has it
            pass
        for cls in classes:
            original = cls.run
            self.installed.append((cls, original))
            self.patch(cls, "run", self.wrap(original))
        self.hooks = triton_hooks()
        self.registry = Registry()

    def patch(self, cls: type, attr: str, wrapper: Any) -> None:
        self.patched.append((cls, attr, getattr(cls, attr), wrapper))
        setattr(cls, attr, wrapper)

    def uninstall(self) -> None:
        for cls, attr, original, _ in reversed(self.patched):
            setattr(cls, attr, original)
        self.patched.clear()
        self.installed.clear()

    def copies(self, original: Any) -> Any:
        recorder = self

        def copy_args(executor: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.exempt += 1
            try:
                with torch.autograd.profiler.record_function(EXEMPT_RANGE):  # what the witness exempts
                    return original(executor, *args, **kwargs)
            finally:
                recorder.exempt -= 1

        return copy_args

    def wrap(self, original: Any) -> Any:
        recorder = self

        def run(fn_self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            if recorder.dry:
                return original(fn_self, *args, grid=grid, warmup=True, **kwargs)
            name = getattr(fn_self, "__name__", None) or getattr(getattr(fn_self, "fn", None), "__name__", "kernel")
            for value in list(args) + list(kwargs.values()):
                problem = foreign_argument(value)
                if problem:
                    recorder.violations.append(f"{name}: argument of type {problem}")
            if getattr(fn_self, "pre_run_hooks", None):
                recorder.violations.append(f"{VIOLATION_REGISTERED}a pre-run hook on kernel {name}")
            result = original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
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

    def tampering(self, seen: set[str]) -> list[str]:
        """What changed since install() that candidate code must not change (violations, prefixed)."""
        found = [
            f"{VIOLATION_TAMPER}{cls.__name__}.{attr} was replaced"
            for cls, attr, _, wrapper in self.patched
            if cls.__dict__.get(attr) is not wrapper
        ]
        if self.hooks and triton_hooks() != self.hooks:
            changed = sorted(k for k, v in triton_hooks().items() if self.hooks.get(k) != v)
            found.append(f"{VIOLATION_REGISTERED}Triton hook(s) set: {', '.join(changed)}")
        if self.registry is not None:
            found += [VIOLATION_REGISTERED + change for change in self.registry.changes(seen)]
        return found

    @property
    def total(self) -> int:
        return sum(self.launches.values())


def foreign_argument(value: Any) -> str | None:
    """The type of a kernel argument whose methods would run candidate code inside the launch: a tensor
    subclass, or any other object that offers data_ptr (Triton takes it for a tensor)."""
    if isinstance(value, (tuple, list)):
        return next((p for p in map(foreign_argument, value) if p), None)
    if isinstance(value, torch.Tensor):
        return None if type(value) in PLAIN_TENSOR_TYPES else type(value).__qualname__
    if type(value).__module__.startswith("triton."):  # TensorWrapper, TensorDescriptor: check what they hold
        inner = getattr(value, "base", None)
        return foreign_argument(inner) if inner is not None and inner is not value else None
    try:
        duck = hasattr(value, "data_ptr")
    except Exception:  # a __getattr__ that raises is candidate code too
        duck = True
    return type(value).__qualname__ if duck else None


def describe_args(args: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(f"tensor:{a.dtype}" if isinstance(a, torch.Tensor) else a for a in args)


def describe_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    return {k: (f"tensor:{v.dtype}" if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()}


class Witness:
    """A second observer of a checked call, kept in torch's C++ profiler instead of Python objects candidate code
    can reach or switch off: the aten ops the call ran (whatever dispatch modes were on, in any thread) and, on
    CUDA, the kernels the device ran. Compared with the op log and the launch counts when the log closes."""

    def __init__(self) -> None:
        self.cuda = torch.cuda.is_available()
        self.profile: Any = None
        self.failed = ""

    def start(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
        try:
            self.profile = profile(activities=activities, experimental_config=all_threads())
            self.profile.__enter__()
        except Exception as exc:  # a profiler already running is a candidate's (the harness runs none)
            self.profile, self.failed = None, f"{type(exc).__name__}: {exc}"[:200]

    def stop(self, logged: collections.Counter[str], launched: collections.Counter[str]) -> list[str]:
        """Violations: ops the witness saw that the op log did not (logged: the log's ops as aten::name), and
        launches counted that no kernel run backs."""
        if self.profile is None:
            return [f"{VIOLATION_TAMPER}the witness profiler could not start ({self.failed})"]
        try:
            if self.cuda:
                torch.cuda.synchronize()
            self.profile.__exit__(None, None, None)
            events = list(self.profile.events())
        except Exception as exc:  # stopped or reset from inside the call
            return [f"{VIOLATION_TAMPER}the witness profiler was stopped ({type(exc).__name__})"]
        problems: list[str] = []
        try:
            unseen = unlogged_ops(events, logged)
        except Exception:  # a torch whose profiler events differ: no cross-check rather than every call refused
            log.warning("the runtime guard's witness could not read this torch's profiler events", exc_info=True)
            return []
        if unseen:
            listing = ", ".join(f"{name}×{n}" for name, n in sorted(unseen.items())[:5])
            problems.append(f"{VIOLATION_TAMPER}ops ran that the op log did not see: {listing}")
        ran = launches_seen(events, self.cuda, set(launched))
        counted = launched if self.cuda else collections.Counter({"*": sum(launched.values())})
        if self.cuda and not any(str(e.device_type).endswith("CUDA") for e in events):
            counted = collections.Counter()  # no device activity recorded at all (no CUPTI here): nothing to check
        forged = {name: n for name, n in counted.items() if n > ran.get(name, 0)}
        if forged:
            listing = ", ".join(f"{name} {n} counted, {ran.get(name, 0)} ran" for name, n in sorted(forged.items()))
            problems.append(f"{VIOLATION_TAMPER}launches counted that no kernel run backs: {listing}")
        return problems


def all_threads() -> Any:
    """The profiler's setting that records ops in every thread (the op log sees only the calling thread's), where
    this torch has it; else None (the calling thread only)."""
    try:
        from torch._C._profiler import _ExperimentalConfig

        return _ExperimentalConfig(profile_all_threads=True)
    except (ImportError, TypeError):
        return None


AUTOGRAD_NODE = "autograd::engine::evaluate_function: "
# Autograd's own functions and nodes named outside the engine's ranges: once_differentiable's DelayedError (outputs
# that raise when differentiated again), AccumulateGrad (a leaf's .grad written by a whole backward). Transparent
# like the engine's nodes: whatever ops they run are their children, accounted for like any other.
AUTOGRAD_WRAPPERS = frozenset(
    {"torch::autograd::DelayedError", "torch::autograd::AccumulateGrad", "torch::autograd::GraphRoot"}
)
PLAIN_DISPATCH = torch.Tensor.__torch_dispatch__  # torch's disabled default (nn.Parameter's too)


def unlogged_ops(events: list[Any], logged: collections.Counter[str]) -> collections.Counter[str]:
    """Ops in the witness's events that the op log did not see, by count: walking each call's tree in order, an
    op event takes one of the log's calls of that name (its children are its own implementation, which the log
    never sees), a composite op the log sees through (torch.softmax is logged as the aten::_softmax it calls) is
    looked into, and any other op is unaccounted. Ranges of user annotations and the autograd engine's nodes
    are transparent, except the interpreter's copies, whose copy ops are exempt. By count, not by name: one
    logged call must not account for the same op hidden anywhere else (in another thread, or under a composite
    op run while the log was off)."""
    remaining = collections.Counter(logged)
    missing: collections.Counter[str] = collections.Counter()

    def annotation(event: Any) -> bool:  # a record_function range (the attribute is missing on older torch)
        return bool(getattr(event, "is_user_annotation", False))

    def visit(event: Any, exempt: bool) -> None:
        if (
            annotation(event)
            or "::" not in event.name
            or event.name.startswith(AUTOGRAD_NODE)
            or event.name in AUTOGRAD_WRAPPERS
        ):
            for child in event.cpu_children:  # a range, the profiler's PythonDispatchMode, a backward node
                visit(child, exempt or event.name == EXEMPT_RANGE)
        elif exempt and event.name.removeprefix("aten::") in INTERPRETER_COPY_OPS:
            return
        elif remaining[event.name] > 0:
            remaining[event.name] -= 1
        elif composite_only(event.name):
            for child in event.cpu_children:  # none: it returned its input as it was (x.to(x.device))
                visit(child, exempt)
        else:
            missing[event.name] += 1

    for event in events:
        if event.cpu_parent is None and str(event.device_type).endswith("CPU"):
            visit(event, False)
    return missing


@functools.cache
def composite_only(name: str) -> bool:
    """Whether every overload of the op named `name` (as the profiler names it, aten::to) is
    CompositeImplicitAutograd, out= overloads aside (softmax.int_out has a kernel that calls _softmax.out): such
    an op has no kernel of its own and computes only through the ops it calls, so an event of it without children
    did nothing (x.to(x.device), x.contiguous() of a contiguous x return x itself, and the dispatch mode sees no
    op, as none ran), and one with children is accounted for by them."""
    if not name.startswith("aten::"):  # torch's own ops only: a registered op is the candidate's
        return False
    try:
        overloads = [
            n
            for n in torch._C._dispatch_get_all_op_names()
            if (n == name or n.startswith(name + ".")) and not n.endswith("out")
        ]
        return bool(overloads) and all(
            torch._C._dispatch_has_kernel_for_dispatch_key(n, "CompositeImplicitAutograd") for n in overloads
        )
    except Exception:  # a torch without these internals: no exemption
        return False


def launches_seen(events: list[Any], cuda: bool, names: set[str]) -> collections.Counter[str]:
    """Kernel runs the witness saw, by launched kernel name (names): on CUDA the device's kernels; under the
    interpreter, which names nothing, a total ("*") of one per pair of argument-copy ranges (each launch copies
    its arguments in and back)."""
    if cuda:  # a device kernel is Triton's launch of `name` when its name holds it (as the PTX entry does)
        kernels = [e.name for e in events if str(e.device_type).endswith("CUDA")]
        return collections.Counter({name: sum(name in k for k in kernels) for name in names})
    copies = sum(1 for e in events if e.name == EXEMPT_RANGE)
    return collections.Counter({"*": copies // 2})


class OpLog(TorchDispatchMode):
    """Counts the ops run during the candidate's forward, by fully qualified name, outside the interpreter's
    argument copies. Records dtype changes of copies so a cast (a precision trick) is not mistaken for a layout
    op. When it closes it checks that nothing switched it or the launch recorder off (recorder.violations)."""

    def __init__(self, recorder: LaunchRecorder, witness: bool = True) -> None:
        super().__init__()
        self.recorder = recorder
        self.ops: collections.Counter[str] = collections.Counter()
        self.work: collections.Counter[str] = collections.Counter()  # op_work per op
        self.function_modes = 0
        self.launches_before: collections.Counter[str] = collections.Counter()
        self.witness = Witness() if witness else None

    def __enter__(self) -> OpLog:
        self.function_modes = torch._C._len_torch_function_stack()
        self.launches_before = collections.Counter(self.recorder.launches)
        if self.witness is not None:
            self.witness.start()
        return super().__enter__()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        problems: list[str] = []
        if self.witness is not None:  # first: nothing the checks below run is the call's
            launched = self.recorder.launches - self.launches_before
            logged: collections.Counter[str] = collections.Counter()
            for name, n in self.ops.items():
                logged[qualified_op(name).partition(".")[0]] += n
            problems += self.witness.stop(logged, launched)
        stack = _get_current_dispatch_mode_stack()
        if not stack or stack[-1] is not self:
            problems.append(f"{VIOLATION_TAMPER}the op log is no longer the active dispatch mode")
        elif len(stack) > 1:
            problems.append(f"{VIOLATION_REGISTERED}{len(stack) - 1} other dispatch mode(s) active")
        if self.function_modes or torch._C._len_torch_function_stack():  # the harness calls with none
            problems.append(f"{VIOLATION_REGISTERED}a torch function mode was active around the call")
        problems += self.recorder.tampering({qualified_op(n) for n in self.ops})
        self.recorder.violations.extend(problems)
        if any(mode is self for mode in stack):  # the stack as before __enter__: modes left above the log go too
            while _get_current_dispatch_mode_stack()[-1] is not self:
                _pop_mode()
            super().__exit__(exc_type, exc, tb)

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        # A tensor subclass with a __torch_dispatch__ of its own runs Python inside the op (with this mode off
        # the stack, so unlogged): any compute there is hidden behind one logged op such as copy_
        foreign = sorted({t.__name__ for t in types if getattr(t, "__torch_dispatch__", None) is not PLAIN_DISPATCH})
        if foreign:
            self.recorder.violations.append(
                f"{VIOLATION_REGISTERED}a tensor subclass with its own __torch_dispatch__ ({', '.join(foreign)}) "
                f"among the arguments of {op_identity(func)}"
            )
        out = func(*args, **kwargs)
        identity = op_identity(func)
        short = identity.rsplit(".", 1)[0]  # aten.add: the stream message's form
        if self.recorder.exempt and (
            (short.startswith("aten.") and identity.split(".")[1] in INTERPRETER_COPY_OPS)
            or short.startswith("profiler._record_function")  # the witness's range around the copies
        ):
            return out
        self.recorder.check_stream(short)
        identity = flagged(identity, func, args, kwargs, out)
        self.ops[identity] += 1
        self.work[identity] += op_work(func, args, kwargs, out)
        return out


# Convolutions by the argument position of their groups: a grant is of one configuration (weight shape and
# groups), since another (a dense 1x1 for a depthwise 7x7) can do other work at no more FLOPs.
CONVOLUTIONS = {
    "convolution": 8,
    "_convolution": 8,
    **{f"conv{d}d": 6 for d in (1, 2, 3)},
    **{f"conv_transpose{d}d": 6 for d in (1, 2, 3)},
}


def flagged(identity: str, func: Any, args: tuple, kwargs: dict, out: Any) -> str:
    """The op's identity with what changes its rule: [dtype] on a copy that changes the dtype, [reduce] on a
    scatter that reduces (scatter_.reduce: a sum into the output, where scatter_.value only moves data),
    [accumulate] on an index_put that accumulates, [weight shape/groups] on a convolution."""
    base = func.__name__.split(".")[0] if isinstance(getattr(func, "__name__", None), str) else ""
    overload = getattr(func, "_overloadname", "")
    if base in {"_to_copy", "copy_", "to", "clone", "type_as"} and changes_dtype(args, out):
        return f"{identity}[dtype]"
    if base in {"scatter", "scatter_"} and (overload in REDUCING_OVERLOADS or kwargs.get("reduce") is not None):
        return f"{identity}[reduce]"
    if base in CONVOLUTIONS and len(args) > 1 and isinstance(args[1], torch.Tensor):  # the configuration granted
        at = CONVOLUTIONS[base]
        groups = args[at] if len(args) > at else kwargs.get("groups", 1)
        return f"{identity}[{'x'.join(map(str, args[1].shape))}/{groups}]"
    if base in {"index_put", "index_put_", "_index_put_impl_"}:
        accumulate = kwargs.get("accumulate", args[3] if len(args) > 3 else False)
        if accumulate:
            return f"{identity}[accumulate]"
    return identity


def tensors_in(values: Any) -> list[torch.Tensor]:
    """The tensors among an op's arguments, in lists too (cat's, index_put's indices)."""
    found: list[torch.Tensor] = []
    for v in values:
        if isinstance(v, torch.Tensor):
            found.append(v)
        elif isinstance(v, (tuple, list)):
            found += [t for t in v if isinstance(t, torch.Tensor)]
    return found


def op_work(func: Any, args: tuple, kwargs: dict, out: Any) -> int:
    """How much work one op call did, for the hybrid grant's bound: its FLOPs where torch's flop counter has a
    formula for it (convolutions, matrix products, attention; the composites that reach the log whole under
    inference_mode by the formula of the op they stand for), else the elements it reads and writes (its tensor
    arguments' and outputs': an index_add's source, a scatter's index, not only its output). 0 where neither can
    be told."""
    name = func.__name__.split(".")[0] if isinstance(getattr(func, "__name__", None), str) else ""
    try:
        from torch.utils.flop_counter import flop_registry

        if INFERENCE_COMPOSITES.get(name) == "convolution" and len(args) >= 2:
            formula = flop_registry[torch.ops.aten.convolution]
            transposed = name.startswith("conv_transpose")
            return int(formula(args[0], args[1], None, None, None, None, transposed, None, None, out_val=out))
        if name == "linear" and len(args) >= 2 and isinstance(out, torch.Tensor):
            return int(2 * out.numel() * args[1].shape[-1])
        formula = flop_registry.get(getattr(func, "overloadpacket", None))
        if formula is not None:
            return int(formula(*args, **kwargs, out_val=out))
    except Exception:  # an overload the formula does not take: the elements it touches
        pass
    outs = out if isinstance(out, (tuple, list)) else [out]
    return sum(t.numel() for t in tensors_in(list(args) + list(kwargs.values()))) + sum(
        t.numel() for t in outs if isinstance(t, torch.Tensor)
    )


def qualified_op(identity: str) -> str:
    """aten.add.Tensor[dtype] → aten::add.Tensor, the dispatcher's name for it; default overloads drop it."""
    base = identity.partition("[")[0]
    namespace, _, rest = base.partition(".")
    return f"{namespace}::{rest.removesuffix('.default')}"


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
