"""The codegen's intermediate representation: a flat list of primitive ops with static shapes.

Leaves are the operator's inputs, parameters/buffers, constants and host views (view/layout ops the
launcher may run outside Triton). Compute nodes are pointwise ops, reductions, a gather along the
last dim, and matmuls. Capture (capture.py) builds it; plan.py cuts it into kernels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch


class UnsupportedError(Exception):
    """The codegen cannot express an op: carries which op and why."""

    def __init__(self, op: str, reason: str) -> None:
        super().__init__(f"{op}: {reason}")
        self.op = op
        self.reason = reason


@dataclass(frozen=True)
class Unsupported:
    """The 'cannot do it' result: the op the codegen met and why it cannot express it."""

    op: str
    reason: str

    def message(self) -> str:
        return f"unsupported op {self.op}: {self.reason}"


POINTWISE = frozenset(
    {
        "add",
        "sub",
        "mul",
        "div",
        "neg",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "abs",
        "relu",
        "sigmoid",
        "tanh",
        "gelu",
        "gelu_tanh",
        "silu",
        "erf",
        "pow",
        "maximum",
        "minimum",
        "where",
        "lt",
        "gt",
        "le",
        "ge",
        "eq",
        "ne",
        "clamp",
        "reciprocal",
        "log1p",
        "expm1",
        "sin",
        "cos",
        "softplus",
        "leaky_relu",
        "elu",
        "hardsigmoid",
        "hardswish",
        "mish",
        "sign",
        "floor",
        "ceil",
        "cast",
        "logical_not",
        "logical_and",
        "logical_or",
        "square",
    }
)
REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin"})
LEAVES = frozenset({"input", "param", "const", "size", "hostview"})


@dataclass
class Node:
    """One value. `args` holds node names (str) for tensor operands; constants live in attrs."""

    name: str
    op: str
    args: tuple[str, ...]
    shape: tuple[int, ...]
    dtype: torch.dtype
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        if self.op in LEAVES:
            return "leaf"
        if self.op in POINTWISE:
            return "pointwise"
        if self.op in REDUCTIONS:
            return "reduce"
        return self.op  # gather, matmul

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


@dataclass
class Graph:
    nodes: dict[str, Node]
    inputs: list[str]  # names of input leaves, in forward-argument order
    outputs: list[str]
    params: dict[str, str] = field(default_factory=dict)  # leaf name -> state_dict key

    def users(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {name: [] for name in self.nodes}
        for node in self.nodes.values():
            for arg in node.args:
                found[arg].append(node.name)
        return found

    def order(self) -> list[Node]:
        return list(self.nodes.values())
