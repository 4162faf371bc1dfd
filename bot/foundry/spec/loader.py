"""Operators in KernelBench format: `class Model(nn.Module)`, `get_inputs()`, `get_init_inputs()`.

Optional declarations an operator file may make (all module level):
  get_cpu_inputs(), get_cpu_init_inputs()   small shapes for CPU runs under the Triton interpreter
  get_shape_variants(), get_cpu_shape_variants()   extra input lists (same init) to catch shape
                                                   specialization
  FOUNDRY_PRECISION = "fp32" | "tf32" | "fp16" | "bf16"   tolerance class (rules/tolerance.yaml)
  FOUNDRY_HYBRID_OPS = ["convolution", …]   aten ops allowed outside Triton in the hybrid policy
  FOUNDRY_TRAINING = True   the operator is used in training: a candidate must also give the gradients of its
                            floating inputs and parameters (checked against the reference's autograd)
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from torch import nn

from foundry.core.errors import FatalError
from foundry.core.records import OperatorSpec

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")


class SpecError(FatalError):
    """The operator cannot be loaded; the message names the file and the problem."""


def parse_operator_ref(ref: str) -> tuple[Path, str]:
    path, _, cls = ref.partition("::")
    if not path.endswith(".py"):
        raise SpecError(f"{ref}: an operator is path/to/file.py or path/to/file.py::ClassName")
    if cls and not cls.isidentifier():
        raise SpecError(f"{ref}: {cls!r} is not a class name")
    return Path(path), cls or "Model"


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "operator"


def import_file(path: Path, label: str) -> ModuleType:
    """Import a Python file under a private module name. Errors become SpecError."""
    name = f"foundry_op_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]}"
    try:
        source = path.read_text()
    except OSError as exc:
        raise SpecError(f"{path}: cannot read {label}: {exc.strerror or exc}") from exc
    try:
        compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise SpecError(f"{path}:{exc.lineno}: syntax error in {label}: {exc.msg}") from exc
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        last = traceback.format_exception_only(exc)[-1].strip()
        raise SpecError(f"{path}: importing the {label} failed: {last}") from exc
    return module


def call_declared(module: ModuleType, path: Path, fn_name: str) -> Any:
    fn = getattr(module, fn_name, None)
    if fn is None:
        return None
    if not callable(fn):
        raise SpecError(f"{path}: {fn_name} is not a function")
    try:
        return fn()
    except Exception as exc:
        last = traceback.format_exception_only(exc)[-1].strip()
        raise SpecError(f"{path}: {fn_name}() raised {last}") from exc


def check_inputs(value: Any, path: Path, fn_name: str) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise SpecError(f"{path}: {fn_name}() must return a list, got {type(value).__name__}")
    items = list(value)
    for i, item in enumerate(items):
        if type(item) is not torch.Tensor and not isinstance(item, (int, float, bool)):
            raise SpecError(f"{path}: {fn_name}() item {i} is a {type(item).__name__}; inputs are tensors or numbers")
    if not any(isinstance(item, torch.Tensor) for item in items):
        raise SpecError(f"{path}: {fn_name}() returned no tensor")
    return items


def check_init(value: Any, path: Path, fn_name: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise SpecError(f"{path}: {fn_name}() must return a list, got {type(value).__name__}")
    return list(value)


@dataclass
class LoadedOperator:
    """A loaded operator: the live module plus its serializable spec."""

    spec: OperatorSpec
    module: ModuleType
    model_cls: type[nn.Module]
    source: str
    path: Path

    def init_inputs(self, small: bool = False) -> list[Any]:
        if small and hasattr(self.module, "get_cpu_init_inputs"):
            return check_init(
                call_declared(self.module, self.path, "get_cpu_init_inputs"), self.path, "get_cpu_init_inputs"
            )
        fn = "get_init_inputs"
        return check_init(call_declared(self.module, self.path, fn), self.path, fn)

    def inputs_function(self, small: bool = False) -> str:
        """The name of the function that gives the inputs at these shapes."""
        return "get_cpu_inputs" if small and hasattr(self.module, "get_cpu_inputs") else "get_inputs"

    def inputs(self, small: bool = False) -> list[Any]:
        shapes, dtype = self.spec.input_shapes, self.spec.input_dtype
        if shapes:  # configured (.github/foundry.yml `inputs:`, --inputs): standard-normal tensors of those shapes
            return [torch.randn(shape, dtype=getattr(torch, dtype or "float32")) for shape in shapes]
        fn = self.inputs_function(small)
        found = check_inputs(call_declared(self.module, self.path, fn), self.path, fn)
        if dtype:  # configured (`dtype:`, --dtype): the declared inputs' floating tensors in that dtype
            target = getattr(torch, dtype)
            found = [x.to(target) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in found]
        return found

    def variants(self, small: bool = False) -> list[list[Any]]:
        if self.spec.input_shapes:  # configured shapes: the declared variants are of other inputs
            return []
        fn = "get_cpu_shape_variants" if small else "get_shape_variants"
        if small and not hasattr(self.module, fn) and hasattr(self.module, "get_cpu_inputs"):
            return []  # full-size variants are too large for the interpreter
        raw = call_declared(self.module, self.path, fn if hasattr(self.module, fn) else "get_shape_variants")
        if raw is None:
            return []
        if not isinstance(raw, (list, tuple)):
            raise SpecError(f"{self.path}: {fn}() must return a list of input lists")
        return [check_inputs(v, self.path, fn) for v in raw]

    def build(self, small: bool = False) -> nn.Module:
        init = self.init_inputs(small)
        try:
            return self.model_cls(*init)
        except Exception as exc:
            last = traceback.format_exception_only(exc)[-1].strip()
            raise SpecError(f"{self.path}: {self.spec.class_name}(*get_init_inputs()) raised {last}") from exc


INPUT_DTYPES = ("float32", "float16", "bfloat16", "float64")


def declared_inputs(loaded: LoadedOperator) -> list[Any]:
    """The operator's inputs as get_inputs() declares them, for their kinds and dtypes only: made on the meta
    device where get_inputs allows it (a GPU-sized input costs no memory or time there), else for real."""
    try:
        with torch.device("meta"):
            return loaded.inputs()
    except Exception:  # noqa: BLE001 - get_inputs needs real values (or raises): run it as it is
        return loaded.inputs()


def at_full_rank(loaded: LoadedOperator, small: list[Any], distinct: bool = True) -> list[Any] | None:
    """`small` (the CPU inputs) reshaped to the ranks get_inputs() declares, where some tensor's rank differs: leading
    dims merged (values kept) or added (size 2), the trailing ones as they are, so that features, channels and
    normalized shapes keep their CPU sizes. A kernel specialised to the CPU inputs' rank (a layer norm reducing the
    first two dims of a 3-d input) meets the rank it will run at on the GPU. The added leading dims hold the values
    rotated (`distinct`: each copy's elements shifted along the flat order, booleans repeated), so that a kernel
    reading every batch at batch 0's offset (a stride left out) gives wrong results; repeated where not distinct.
    None where the ranks agree, or the full inputs are configured, cannot be made, or do not match the CPU ones
    one for one."""
    if loaded.spec.input_shapes or not hasattr(loaded.module, "get_cpu_inputs"):
        return None
    try:
        full = declared_inputs(loaded)
    except Exception:  # noqa: BLE001 - no full inputs to take ranks from
        return None
    if len(full) != len(small):
        return None
    out: list[Any] = []
    for f, x in zip(full, small, strict=True):
        if not (isinstance(f, torch.Tensor) and isinstance(x, torch.Tensor)) or f.dim() == x.dim() or x.dim() == 0:
            out.append(x)
        elif f.dim() < x.dim():
            k = x.dim() - f.dim() + 1
            out.append(x.reshape(-1, *x.shape[k:]) if f.dim() > 0 else x.reshape(-1)[:1].reshape(()))
        else:
            lead = [2] * (f.dim() - x.dim())
            copies = 2 ** len(lead)
            if distinct and x.dtype != torch.bool and x.numel() > 1:
                step = x.numel() // copies + 1  # each copy's values moved by a different offset
                flat = x.reshape(-1)
                out.append(torch.stack([flat.roll(c * step) for c in range(copies)]).reshape(*lead, *x.shape))
            else:
                out.append(x.expand(*lead, *x.shape).clone())
    changed = any(isinstance(a, torch.Tensor) and a.dim() != b.dim() for a, b in zip(out, small, strict=True))
    return out if changed else None


def load_operator(
    ref: str,
    *,
    precision: str | None = None,
    hybrid_ops: tuple[str, ...] = (),
    training: bool | None = None,
    input_shapes: tuple[tuple[int, ...], ...] = (),
    input_dtype: str | None = None,
) -> LoadedOperator:
    """The operator `ref` names, with what its file declares (FOUNDRY_PRECISION, FOUNDRY_TRAINING,
    FOUNDRY_HYBRID_OPS) unless given here (from .github/foundry.yml or the command line): `input_shapes` stand
    in for get_inputs() (an operator file without one needs them), `input_dtype` for its floating dtype."""
    path, class_name = parse_operator_ref(ref)
    if not path.is_file():
        raise SpecError(f"{path}: no such operator file")
    module = import_file(path, "operator")
    cls = getattr(module, class_name, None)
    if cls is None:
        raise SpecError(f"{path}: no class {class_name!r} (KernelBench format needs class Model or file.py::Class)")
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise SpecError(f"{path}: {class_name} is not an nn.Module subclass")
    if not input_shapes and not callable(getattr(module, "get_inputs", None)):
        raise SpecError(
            f"{path}: no get_inputs() function (KernelBench format); or give the input shapes (`inputs:` in "
            ".github/foundry.yml, --inputs)"
        )
    if input_dtype is not None and input_dtype not in INPUT_DTYPES:
        raise SpecError(f"{path}: dtype {input_dtype!r} is not one of {', '.join(INPUT_DTYPES)}")
    if any(not shape or any(not isinstance(n, int) or n < 1 for n in shape) for shape in input_shapes):
        raise SpecError(f"{path}: input shapes {list(map(list, input_shapes))} must be lists of positive integers")
    declared = getattr(module, "FOUNDRY_PRECISION", "fp32")
    precision = precision or declared
    if precision not in PRECISIONS:
        raise SpecError(f"{path}: precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    hybrid = tuple(getattr(module, "FOUNDRY_HYBRID_OPS", ())) + tuple(hybrid_ops)
    declared_training = getattr(module, "FOUNDRY_TRAINING", False)
    if not isinstance(declared_training, bool):
        raise SpecError(f"{path}: FOUNDRY_TRAINING must be True or False, got {declared_training!r}")
    training = declared_training if training is None else training
    source = path.read_text()
    stem = path.stem if class_name == "Model" else f"{path.stem}-{class_name}"
    loaded = LoadedOperator(
        spec=OperatorSpec(
            path=str(path),
            class_name=class_name,
            name=slugify(stem),
            precision=precision,
            hybrid_ops=hybrid,
            training=training,
            input_shapes=tuple(tuple(shape) for shape in input_shapes),
            input_dtype=input_dtype,
            source_hash=hashlib.sha256(source.encode()).hexdigest()[:16],
        ),
        module=module,
        model_cls=cls,
        source=source,
        path=path,
    )
    inputs = declared_inputs(loaded)  # fail early, with a clear message, on broken get_inputs
    dtypes = [t.dtype for t in inputs if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if dtypes:
        dtype = str(dtypes[0]).removeprefix("torch.")
        loaded.spec = loaded.spec.model_copy(update={"dtype": dtype})
    return loaded
