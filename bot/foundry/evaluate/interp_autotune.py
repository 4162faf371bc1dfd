"""Multi-config @triton.autotune under Triton's interpreter (TRITON_INTERPRET=1, the CPU path).

Triton's autotuner times each config with the active driver's benchmarker, and the interpreter has no driver
("0 active drivers"), so every multi-config kernel failed on CPU although most LLM-written kernels are
autotuned. Timing an interpreted kernel would say nothing anyway. Installed in the worker, this keeps the
autotuner's own logic (pruning, pre/post hooks, reset_to_zero and restore_value, its cache) and replaces only
two things:

- the benchmarker runs each config's call once and reports the configs in their pruned order, so a key's first
  call runs every config as tuning does on a GPU and keeps the first;
- every later call with the same key uses the next of that key's configs, so over the checked calls each
  config the search could pick is the one whose output is judged (a kernel wrong for one of its configs fails
  once that config's turn comes; with more configs than calls per key, the first ones are covered).

keep_kernel_globals() also keeps the interpreter from adding its own module's globals to the candidate's.

Imports only stdlib, triton and (for TF32 rounding) numpy, which the interpreter runs on (it runs inside the
untrusted child)."""

from __future__ import annotations

import copy
import functools
import logging
import os
from typing import Any

log = logging.getLogger(__name__)

TURNS = "_foundry_turns"  # per tuning key: [its pruned configs, the index of the next call's config]
BENCHED = "_foundry_benched"  # configs benchmarked in the current tuning round


# The run install() put on the Autotuner: kept here, not as a marker on what it patched (a candidate reading
# hasattr(kernel.run, "...") would tell the worker from use). Installed while the Autotuner's run is this one.
PATCHED: Any = None


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def install() -> bool:
    """Patch triton's Autotuner when running under the interpreter; True if patched (now or before). Also
    installs interp_libdevice (libdevice functions under the interpreter), which the worker reaches through
    this call."""
    if not interpreting():
        return False
    from foundry.evaluate import interp_libdevice

    interp_libdevice.install()
    emulate_tf32()
    shuffle_programs()
    remember_builtins()
    bound_memory()
    from triton.runtime.autotuner import Autotuner

    global PATCHED
    if PATCHED is not None and vars(Autotuner).get("run") is PATCHED:
        return True
    if "do_bench" not in vars(Autotuner):  # a triton whose autotuner calls the benchmark function directly
        log.warning("this triton's Autotuner has no do_bench to replace: autotuned kernels fail under the interpreter")
        return False
    Autotuner.do_bench = property(lambda tuner: functools.partial(bench_once, tuner))
    PATCHED = Autotuner.run = in_turn(Autotuner.run)
    return True


def tf32(data: Any) -> Any:
    """fp32 values rounded to TF32 (10 explicit mantissa bits, to nearest), infinities and NaN as they are."""
    import numpy as np

    bits = data.astype(np.float32).view(np.uint32)
    special = (bits & 0x7F800000) == 0x7F800000
    rounded = ((bits.astype(np.uint64) + 0x1000) & 0xFFFFE000).astype(np.uint32)
    return np.where(special, bits, rounded).view(np.float32)


def emulate_tf32() -> bool:
    """Under the interpreter, tl.dot of fp32 operands at input_precision "tf32" (Triton's default on NVIDIA GPUs)
    multiplies their TF32 roundings, as the GPU's tensor cores do; the interpreter's own dot is full fp32 whatever
    the precision says, so a plain tl.dot in an fp32 operator passed on the CPU and failed on the GPU. "tf32x3" and
    "ieee" stay full fp32; a split done by hand (three TF32 dots of high and low parts) keeps its fp32 accuracy."""
    if not interpreting():
        return False
    from triton._C.libtriton import ir
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    original = vars(builder).get("create_dot")
    if original is None or getattr(original, "__name__", "") == "create_dot_tf32":
        return original is not None

    def create_dot_tf32(self: Any, a: Any, b: Any, d: Any, input_precision: Any, max_num_imprecise_acc: Any) -> Any:
        if input_precision == ir.INPUT_PRECISION.TF32 and a.data.dtype.name == "float32" == b.data.dtype.name:
            a = interpreter.TensorHandle(tf32(a.data), a.dtype)
            b = interpreter.TensorHandle(tf32(b.data), b.dtype)
        return original(self, a, b, d, input_precision, max_num_imprecise_acc)

    builder.create_dot = create_dot_tf32
    return True


# The order the programs of the launch in progress run in (a permutation of their flat indices), per builder
ORDERS: dict[int, list[int]] = {}


def shuffle_programs() -> bool:
    """Under the interpreter, run each launch's programs in a fresh random order rather than in grid order: on a GPU
    programs run in any order and at once, and a kernel whose programs talk through global memory without atomics
    (the last program of a row summing the others' partials) is right only when they happen to run in order."""
    if not interpreting():
        return False
    import random
    import secrets

    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    set_dim, set_idx = vars(builder).get("set_grid_dim"), vars(builder).get("set_grid_idx")
    if set_dim is None or set_idx is None:
        return False
    if getattr(set_idx, "__name__", "") == "set_grid_idx_shuffled":
        return True

    def set_grid_dim_shuffled(self: Any, nx: int, ny: int, nz: int) -> None:
        set_dim(self, nx, ny, nz)
        order = list(range(nx * ny * nz))
        random.Random(secrets.randbits(64)).shuffle(order)
        ORDERS[id(self)] = order

    def set_grid_idx_shuffled(self: Any, x: int, y: int, z: int) -> None:
        _, ny, nz = self.grid_dim
        order = ORDERS.get(id(self))
        flat = (x * ny + y) * nz + z
        if order is None or flat >= len(order):
            set_idx(self, x, y, z)
            return
        at = order[flat]
        set_idx(self, at // (ny * nz), (at // nz) % ny, at % nz)

    builder.set_grid_dim = set_grid_dim_shuffled
    builder.set_grid_idx = set_grid_idx_shuffled
    return True


# Per module or class the interpreter patches, the names of its Triton builtins (found once)
BUILTINS: dict[int, tuple[Any, list[str]]] = {}


def remember_builtins() -> bool:
    """Under the interpreter, find the Triton builtins of each language module once, not at every call. Triton binds
    them to the interpreter (interpreter._patch_builtin) at each launch and at each call of one @triton.jit function
    from another (a helper; tl.sum's combine function, per program and per reduction), each time by scanning every
    member of the module (inspect.getmembers): a third of a training candidate's backward on the CPU. The same
    attributes are bound as before: a name is a builtin's, or a binding of one still in place (the interpreter's
    wrapper keeps the builtin as its `member` default). True if patched."""
    if not interpreting():
        return False
    import inspect

    from triton.language.core import is_builtin
    from triton.runtime import interpreter

    scan, bind = getattr(interpreter, "_patch_builtin", None), getattr(interpreter, "_patch_attr", None)
    if scan is None or bind is None:
        log.warning("this triton's interpreter has no _patch_builtin / _patch_attr to replace")
        return False
    if getattr(scan, "__name__", "") == "patch_remembered":
        return True

    def builtin_or_bound(member: Any) -> bool:
        kept = getattr(member, "__kwdefaults__", None)
        return is_builtin(member) or (isinstance(kept, dict) and is_builtin(kept.get("member")))

    def patch_remembered(pkg: Any, builder: Any, scope: Any) -> None:
        known = BUILTINS.get(id(pkg))
        if known is None or known[0] is not pkg:
            known = BUILTINS[id(pkg)] = (pkg, [name for name, m in inspect.getmembers(pkg) if builtin_or_bound(m)])
        names = known[1]
        if names and not is_builtin(getattr(pkg, names[0], None)) and not is_builtin(getattr(pkg, names[-1], None)):
            return  # bound already: a scope binds all of a module's builtins and restores all of them
        for name in names:
            member = getattr(pkg, name, None)
            if is_builtin(member):
                bind(pkg, name, member, builder, scope)

    interpreter._patch_builtin = patch_remembered
    # and the numpy dtype of each Triton dtype, which it maps through a table built anew at every call
    convert = interpreter._get_np_dtype
    tl = interpreter.tl
    known_dtypes: dict[Any, Any] = {}

    def np_dtype_remembered(tt_dtype: Any) -> Any:
        if isinstance(tt_dtype, tl.block_type) and not isinstance(tt_dtype.element_ty, tl.pointer_type):
            tt_dtype = tt_dtype.element_ty  # a block of a scalar type: its element's
        if isinstance(tt_dtype, (tl.pointer_type, tl.block_type)):
            return convert(tt_dtype)  # pointers, blocks of pointers
        found = known_dtypes.get(tt_dtype)
        if found is None:
            found = known_dtypes[tt_dtype] = convert(tt_dtype)
        return found

    if getattr(convert, "__name__", "") == "_get_np_dtype":
        interpreter._get_np_dtype = np_dtype_remembered
    return True


class OutOfBounds(RuntimeError):
    """A kernel under the interpreter touched memory outside every tensor it was launched with."""


# Per launch in progress: the sorted (start, end) byte spans of the storages of the tensors it was given
SPANS: list[tuple[Any, Any]] = []


def bound_memory() -> bool:
    """Under the interpreter, every load, store and atomic of a kernel must fall inside the storage of a tensor it was
    launched with. The interpreter reads and writes raw host addresses without a check: past a tensor's end lie the
    allocator's spare bytes (a few to a few hundred), where a kernel could keep a call counter or a cache that no
    snapshot of the module's tensors sees, or read what other objects hold. A masked-off lane is not an access.
    A kernel that reaches outside raises OutOfBounds, naming the access. True if patched."""
    if not interpreting():
        return False
    import numpy as np
    from triton.runtime import interpreter

    raw = getattr(interpreter, "_interpreter", None)
    executor = getattr(interpreter, "GridExecutor", None)
    if raw is None or executor is None or "__call__" not in vars(executor):
        log.warning("this triton's interpreter has no _interpreter / GridExecutor to bound memory for")
        return False
    if type(raw).__name__ == "BoundedMemory":
        return True
    launch = vars(executor)["__call__"]

    def spans_of(args: Any) -> tuple[Any, Any]:
        found: list[tuple[int, int]] = []

        def visit(arg: Any) -> None:
            if isinstance(arg, (tuple, list)):
                for item in arg:
                    visit(item)
                return
            base = getattr(arg, "base", None)  # a TensorDescriptor, a TensorWrapper: the tensor it wraps
            if base is not None and hasattr(base, "untyped_storage") and not hasattr(arg, "untyped_storage"):
                arg = base
            if hasattr(arg, "untyped_storage"):
                storage = arg.untyped_storage()
                if storage.nbytes():
                    found.append((storage.data_ptr(), storage.data_ptr() + storage.nbytes()))

        visit(list(args))
        found.sort()
        starts = np.array([a for a, _ in found], dtype=np.uint64)
        ends = np.array([b for _, b in found], dtype=np.uint64)
        return starts, ends

    def check(what: str, ptrs: Any, mask: Any, size: int) -> None:
        if not SPANS:
            return
        starts, ends = SPANS[-1]
        at = np.asarray(ptrs, dtype=np.uint64)
        if mask is not None:
            at = at[np.broadcast_to(np.asarray(mask, dtype=bool), at.shape)]
        at = at.reshape(-1)
        if at.size == 0:
            return
        which = np.searchsorted(starts, at, side="right").astype(np.int64) - 1
        inside = which >= 0
        inside[inside] = at[inside] + np.uint64(size) <= ends[which[inside]]
        if not bool(inside.all()):
            bad = int(at[~inside][0])
            raise OutOfBounds(
                f"a kernel's {what} at address {bad:#x} ({size} bytes) is outside every tensor it was launched with"
            )

    class BoundedMemory:
        def __getattr__(self, name: str) -> Any:
            return getattr(raw, name)

        @staticmethod
        def load(ptrs: Any, mask: Any, other: Any, dtype: Any) -> Any:
            check("load", ptrs, mask, np.dtype(dtype).itemsize)
            return raw.load(ptrs, mask, other, dtype)

        @staticmethod
        def store(ptrs: Any, value: Any, mask: Any) -> Any:
            check("store", ptrs, mask, np.asarray(value).dtype.itemsize)
            return raw.store(ptrs, value, mask)

        @staticmethod
        def atomic_cas(ptr: Any, cmp: Any, val: Any, sem: Any) -> Any:
            check("atomic", ptr, None, np.asarray(val).dtype.itemsize)
            return raw.atomic_cas(ptr, cmp, val, sem)

        @staticmethod
        def atomic_rmw(op: Any, ptr: Any, val: Any, mask: Any, sem: Any) -> Any:
            check("atomic", ptr, mask, np.asarray(val).dtype.itemsize)
            return raw.atomic_rmw(op, ptr, val, mask, sem)

    def launch_bounded(self: Any, *args: Any, **kwargs: Any) -> Any:
        SPANS.append(spans_of([*args, *kwargs.values()]))
        try:
            return launch(self, *args, **kwargs)
        finally:
            SPANS.pop()

    interpreter._interpreter = BoundedMemory()
    executor.__call__ = launch_bounded
    return True


def keep_kernel_globals() -> bool:
    """Under the interpreter, run each rewritten kernel in a copy of its module's globals. Triton's
    FunctionRewriter rewrites a kernel's source at its first launch and executes it with the kernel module's
    own globals, after adding to that module every global of triton.runtime.interpreter it lacks (numpy,
    inspect, the interpreter's raw memory load and store): a candidate naming them without an import (a name
    bound only in dead code) would reach them once any kernel ran, in the module or in the kernel's body. The
    copy holds the module's names and the one the rewritten source needs (interpreter_semantic), nothing else
    of the interpreter's; the candidate's module is left as it was. True if patched."""
    if not interpreting():
        return False
    from triton.runtime import interpreter

    rewriter = getattr(interpreter, "FunctionRewriter", None)
    if rewriter is None or "_compile_and_exec" not in vars(rewriter):
        log.warning("this triton's interpreter has no FunctionRewriter._compile_and_exec to replace")
        return False

    # the one name the rewritten source refers to (ASTTransformer: x = v becomes interpreter_semantic.to_tensor(v))
    needed = {name: vars(interpreter)[name] for name in ("interpreter_semantic",) if name in vars(interpreter)}

    def compile_and_exec(self: Any, transformed_ast: Any) -> Any:
        compiled = compile(transformed_ast, filename=self.filename, mode="exec")
        local_namespace = {**self.kwargs}
        scope = {**self.fn.__globals__, **needed} if needed else {**vars(interpreter), **self.fn.__globals__}
        exec(compiled, scope, local_namespace)  # noqa: S102 - the kernel's own source, as Triton runs it
        return local_namespace[self.fn.__name__]

    rewriter._compile_and_exec = compile_and_exec
    return True


def bench_once(tuner: Any, kernel_call: Any, quantiles: Any = None, **_: Any) -> Any:
    """Run one config's call once and time it by its place in the round: the first config wins."""
    kernel_call()
    place = float(tuner.__dict__.get(BENCHED, 0))
    tuner.__dict__[BENCHED] = place + 1
    return [place] * len(quantiles) if quantiles else place


def in_turn(original: Any) -> Any:
    def run(tuner: Any, *args: Any, **kwargs: Any) -> Any:
        if len(tuner.configs) <= 1:
            return original(tuner, *args, **kwargs)
        turns: dict[Any, list[Any]] = tuner.__dict__.setdefault(TURNS, {})
        assigned = {}
        for key, (configs, turn) in turns.items():  # a copy per key: which key this call used is the one it ran
            assigned[key] = tuner.cache[key] = copy.copy(configs[turn % len(configs)])
        tuned_before = set(tuner.cache)
        tuner.__dict__[BENCHED] = 0
        result = original(tuner, *args, **kwargs)
        used = tuner.best_config
        for key in set(tuner.cache) - tuned_before:  # tuned now: its first config ran; the next call, the second
            timings = getattr(tuner, "configs_timings", None) or {tuner.cache[key]: 0.0}
            turns[key] = [list(timings), 1]
        for key, config in assigned.items():
            if config is used:
                turns[key][1] += 1
        return result

    # the original's name and doc, but no __wrapped__ (functools.wraps) and no marker: nothing a candidate reads
    run.__name__, run.__qualname__, run.__doc__ = original.__name__, original.__qualname__, original.__doc__
    return run
