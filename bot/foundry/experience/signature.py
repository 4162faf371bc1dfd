"""Op signatures: a normalized description of what an operator computes, so that "the same kind of
operator" is recognized across repositories. Pure records and arithmetic; no torch (the capture lives
in foundry.spec.signature).

A signature holds the aten op sequence of one forward call (allocation and aliasing ops dropped,
synonyms folded), the dtypes, and shape buckets (each dimension rounded up to a power of two) of the
inputs, parameters and outputs. `similarity(a, b)` is in [0, 1]: 1 for equal signatures, high for the
same op sequence at other sizes, low when the computations differ.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import cached_property

from pydantic import BaseModel, ConfigDict, Field

SIGNATURE_VERSION = 1

# Ops that neither compute nor change the access pattern: dropped from the sequence.
IGNORED_OPS = frozenset(
    {
        "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like",
        "new_zeros", "full", "full_like", "new_full", "ones", "ones_like", "new_ones", "scalar_tensor",
        "detach", "alias", "lift_fresh", "lift_fresh_copy", "view", "_unsafe_view", "reshape",
        "_reshape_alias", "expand", "unsqueeze", "squeeze", "flatten", "unflatten", "sym_size",
        "sym_stride", "sym_numel", "sym_storage_offset", "is_contiguous", "_local_scalar_dense",
        "_to_copy", "to", "copy_", "clone", "contiguous", "dim", "size", "stride", "device", "layout",
    }
)  # fmt: skip

# Synonyms: the same computation reached through different entry points.
OP_ALIASES = {
    "_softmax": "softmax",
    "_log_softmax": "log_softmax",
    "matmul": "mm",
    "linear": "addmm",
    "_convolution": "convolution",
    "conv1d": "convolution",
    "conv2d": "convolution",
    "conv3d": "convolution",
    "layer_norm": "native_layer_norm",
    "batch_norm": "native_batch_norm",
    "_native_batch_norm_legit": "native_batch_norm",
    "_native_batch_norm_legit_no_training": "native_batch_norm",
    "_native_batch_norm_legit_functional": "native_batch_norm",
    "group_norm": "native_group_norm",
    "_fused_rms_norm": "rms_norm",
    "relu_": "relu",
    "add_": "add",
    "mul_": "mul",
}

OP_CLASSES: dict[str, frozenset[str]] = {
    "matmul": frozenset({"mm", "bmm", "addmm", "baddbmm", "addbmm", "_scaled_mm", "dot", "mv", "addmv"}),
    "convolution": frozenset({"convolution", "convolution_backward"}),
    "softmax": frozenset({"softmax", "log_softmax", "logsumexp"}),
    "normalization": frozenset({"native_layer_norm", "native_batch_norm", "native_group_norm", "rms_norm"}),
    "reduction": frozenset(
        {
            "sum",
            "mean",
            "amax",
            "amin",
            "max",
            "min",
            "prod",
            "var",
            "std",
            "var_mean",
            "std_mean",
            "logsumexp",
            "norm",
            "linalg_vector_norm",
            "argmax",
            "argmin",
            "all",
            "any",
            "softmax",
            "log_softmax",
            "native_layer_norm",
            "native_batch_norm",
            "native_group_norm",
            "rms_norm",
        }
    ),  # fmt: skip
    "scan": frozenset({"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"}),
    "attention": frozenset(
        {
            "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_efficient_attention",
            "_scaled_dot_product_flash_attention_for_cpu",
            "scaled_dot_product_attention",
            "_scaled_dot_product_cudnn_attention",
        }
    ),  # fmt: skip
    "data_movement": frozenset(
        {
            "permute",
            "transpose",
            "t",
            "cat",
            "stack",
            "index",
            "index_select",
            "gather",
            "scatter",
            "slice",
            "select",
            "narrow",
            "split",
            "split_with_sizes",
            "as_strided",
            "roll",
            "flip",
            "repeat",
            "pad",
            "constant_pad_nd",
            "embedding",
        }
    ),  # fmt: skip
    "pooling": frozenset(
        {
            "max_pool2d_with_indices",
            "avg_pool2d",
            "max_pool1d",
            "avg_pool1d",
            "adaptive_avg_pool2d",
            "_adaptive_avg_pool2d",
            "max_pool3d_with_indices",
            "avg_pool3d",
        }
    ),  # fmt: skip
}
# Composite ops and the primitive sequence a hand-written reference would use for them: similarity
# compares both forms, so torch.softmax and amax/sub/exp/sum/div are recognized as the same operator.
EXPANSIONS: dict[str, tuple[str, ...]] = {
    "softmax": ("amax", "sub", "exp", "sum", "div"),
    "log_softmax": ("amax", "sub", "exp", "sum", "log", "sub"),
    "logsumexp": ("amax", "sub", "exp", "sum", "log", "add"),
    "native_layer_norm": ("mean", "sub", "pow", "mean", "add", "rsqrt", "mul", "mul", "add"),
    "rms_norm": ("pow", "mean", "add", "rsqrt", "mul", "mul"),
    "native_group_norm": ("var_mean", "sub", "add", "rsqrt", "mul", "mul", "add"),
    "addmm": ("mm", "add"),
    "baddbmm": ("bmm", "add"),
    "silu": ("sigmoid", "mul"),
    "var_mean": ("var", "mean"),
}

CLASS_NAMES = frozenset(OP_CLASSES) | {"elementwise"}
_NON_ELEMENTWISE = frozenset().union(*OP_CLASSES.values())


def normalize_op(name: str) -> str | None:
    """aten op packet name → the name kept in a signature, or None when the op is dropped."""
    name = OP_ALIASES.get(name, name)
    if name in IGNORED_OPS:
        return None
    return name


def op_class(name: str) -> frozenset[str]:
    classes = frozenset(cls for cls, ops in OP_CLASSES.items() if name in ops)
    return classes if name in _NON_ELEMENTWISE else frozenset({"elementwise"})


def shape_bucket(dim: int) -> int:
    """Round a dimension up to a power of two (0 and 1 stay as they are)."""
    if dim <= 1:
        return max(dim, 0)
    return 1 << (dim - 1).bit_length()


class TensorInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    dtype: str  # "float32", … ; "scalar" for Python numbers
    shape: tuple[int, ...] = ()  # bucketed

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    def describe(self) -> str:
        return "x".join(str(d) for d in self.shape) or "scalar"


class StateEntry(BaseModel):
    """One state_dict entry: its name, dtype and shape, each dimension written as the constructor arguments
    it equals ("arg0", "arg0|arg2") or, equal to none of them, as the number ("64")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    dtype: str
    shape: tuple[str, ...] = ()


class OperatorInterface(BaseModel):
    """How a kernel's module is built and loaded: ModelNew(*init) with the operator's constructor arguments,
    then load_state_dict(the operator's state_dict, strict). A stored kernel passed both for the operator it
    was verified against; for another operator it can only load where the interfaces fit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    init: tuple[str, ...] = ()  # the kinds of the constructor arguments: int, float, bool, str, tensor, …
    state: tuple[StateEntry, ...] = ()

    @classmethod
    def of(cls, init: Sequence[object], state: Sequence[tuple[str, str, tuple[int, ...]]]) -> OperatorInterface:
        """From the constructor arguments and (name, dtype, shape) of each state_dict entry."""
        return cls(
            init=tuple(argument_kind(a) for a in init),
            state=tuple(
                StateEntry(name=name, dtype=dtype, shape=tuple(symbolic_dim(d, init) for d in shape))
                for name, dtype, shape in state
            ),
        )

    def misfit(self, stored: OperatorInterface) -> str | None:
        """Why a kernel verified against an operator with the `stored` interface cannot be built and loaded
        for one with this interface; None when it fits."""
        if self.init != stored.init:
            return f"its constructor took ({', '.join(stored.init)}), this operator's takes ({', '.join(self.init)})"
        mine, theirs = {e.name: e for e in self.state}, {e.name: e for e in stored.state}
        if set(mine) != set(theirs):
            missing, extra = sorted(set(mine) - set(theirs)), sorted(set(theirs) - set(mine))
            return "its state_dict " + "; ".join(
                part
                for part in (
                    f"lacks {', '.join(missing[:4])}" if missing else "",
                    f"has {', '.join(extra[:4])} besides" if extra else "",
                )
                if part
            )
        for name, entry in mine.items():
            other = theirs[name]
            if entry.dtype != other.dtype or not shapes_fit(entry.shape, other.shape):
                return (
                    f"its state_dict entry {name} is {other.dtype} {list(other.shape)}, "
                    f"this operator's is {entry.dtype} {list(entry.shape)}"
                )
        return None


def argument_kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return "sequence"
    return "tensor" if type(value).__name__ in ("Tensor", "Parameter") else "other"


def symbolic_dim(dim: int, init: Sequence[object]) -> str:
    """A dimension as the integer constructor arguments equal to it; 0 and 1 stay numbers (flags and unit
    dimensions say nothing about where a size came from)."""
    if dim > 1:
        names = [f"arg{i}" for i, a in enumerate(init) if type(a) is int and a == dim]
        if names:
            return "|".join(names)
    return str(dim)


def shapes_fit(mine: tuple[str, ...], stored: tuple[str, ...]) -> bool:
    """Same rank; each dimension the same number, or taken from a common constructor argument."""
    if len(mine) != len(stored):
        return False
    for a, b in zip(mine, stored, strict=True):
        if a == b:
            continue
        if a.startswith("arg") and b.startswith("arg") and set(a.split("|")) & set(b.split("|")):
            continue
        return False
    return True


class OpSignature(BaseModel):
    """What an operator computes, normalized. Frozen; `key` identifies it in the experience library."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = SIGNATURE_VERSION
    ops: tuple[str, ...]
    dtype: str = "float32"  # the main floating dtype of the inputs
    inputs: tuple[TensorInfo, ...] = ()
    params: tuple[TensorInfo, ...] = ()
    outputs: tuple[TensorInfo, ...] = ()
    # How the operator's module is built and loaded (signatures stored before it was recorded have None).
    interface: OperatorInterface | None = None
    label: str = Field(default="", exclude=True)  # a human name (operator slug); not part of the key

    @cached_property
    def key(self) -> str:
        data = self.model_dump(mode="json")
        if data.get("interface") is None:
            data.pop("interface", None)  # keys of signatures stored without one stay as they were
        body = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(body.encode()).hexdigest()[:16]

    def misfit(self, stored: OpSignature) -> str | None:
        """Why a kernel verified against `stored` cannot be built and loaded for this operator (None: it
        can, as far as the signatures tell). Where either lacks the interface, the parameters and buffers
        must agree in number, dtype and rank."""
        if self.interface is not None and stored.interface is not None:
            return self.interface.misfit(stored.interface)
        mine = [(t.dtype, len(t.shape)) for t in self.params]
        theirs = [(t.dtype, len(t.shape)) for t in stored.params]
        if mine != theirs:
            return f"its operator has {len(theirs)} parameters and buffers of other dtypes or ranks"
        return None

    @cached_property
    def classes(self) -> frozenset[str]:
        return classes_of(self.ops)

    @property
    def op_set(self) -> frozenset[str]:
        return frozenset(self.ops)

    @property
    def family(self) -> str:
        """A coarse grouping for statistics, e.g. 'reduction+softmax'."""
        main = sorted(self.classes - {"elementwise", "data_movement"}) or sorted(self.classes) or ["empty"]
        return "+".join(main)

    @property
    def max_numel(self) -> int:
        return max((t.numel for t in self.inputs if t.dtype != "scalar"), default=0)

    @property
    def last_dim(self) -> int:
        """The innermost (bucketed) dimension of the largest input: the row length of a reduction."""
        tensors = [t for t in self.inputs if t.shape]
        if not tensors:
            return 0
        return max(tensors, key=lambda t: t.numel).shape[-1]

    def describe(self) -> str:
        ops = " → ".join(self.ops[:8]) + (" …" if len(self.ops) > 8 else "")
        shapes = ", ".join(t.describe() for t in self.inputs if t.dtype != "scalar")
        return f"{ops or '(no ops)'} [{self.dtype}; {shapes}]"

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> OpSignature:
        return cls.model_validate_json(text)


# Weights of the similarity parts; the op sequence dominates because it decides which kernel applies.
W_OPS, W_SHAPES, W_DTYPE = 0.7, 0.2, 0.1


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _dim_closeness(a: int, b: int) -> float:
    if a == b:
        return 1.0
    la, lb = math.log2(max(a, 1)), math.log2(max(b, 1))
    return 1.0 / (1.0 + abs(la - lb))


def _tensor_closeness(a: TensorInfo, b: TensorInfo) -> float:
    if len(a.shape) != len(b.shape):
        return 0.25
    if not a.shape:
        return 1.0
    return sum(_dim_closeness(x, y) for x, y in zip(a.shape, b.shape, strict=True)) / len(a.shape)


def _shape_similarity(a: tuple[TensorInfo, ...], b: tuple[TensorInfo, ...]) -> float:
    if not a and not b:
        return 1.0
    n = max(len(a), len(b))
    return sum(_tensor_closeness(x, y) for x, y in zip(a, b, strict=False)) / n


def expand_ops(ops: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part for op in ops for part in EXPANSIONS.get(op, (op,)))


def classes_of(ops: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for op in ops:
        out |= op_class(op)
    return frozenset(out)


def _sequence_similarity(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    if not a and not b:
        return 1.0
    sequence = SequenceMatcher(None, a, b, autojunk=False).ratio()
    sets = _jaccard(frozenset(a), frozenset(b))
    return 0.6 * sequence + 0.25 * sets + 0.15 * _jaccard(classes_of(a), classes_of(b))


def op_similarity(a: OpSignature, b: OpSignature) -> float:
    """The op sequences compared as written and with composite ops expanded; the better of the two."""
    direct = _sequence_similarity(a.ops, b.ops)
    expanded = _sequence_similarity(expand_ops(a.ops), expand_ops(b.ops))
    return max(direct, expanded)


def similarity(a: OpSignature, b: OpSignature) -> float:
    """In [0, 1]; symmetric; 1.0 exactly when the signatures are equal (label aside)."""
    if a.key == b.key:
        return 1.0
    ops = op_similarity(a, b)
    shapes = 0.7 * _shape_similarity(a.inputs, b.inputs) + 0.3 * _shape_similarity(a.params, b.params)
    dtype = 1.0 if a.dtype == b.dtype else 0.0
    score = W_OPS * ops + W_SHAPES * shapes + W_DTYPE * dtype
    return round(min(score, 0.999999), 6)  # only equal signatures score 1
