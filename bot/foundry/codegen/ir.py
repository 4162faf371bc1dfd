"""The codegen's intermediate representation: a flat list of primitive ops with static shapes.

Leaves are the operator's inputs, parameters/buffers, constants and host views (view/layout ops the
launcher may run outside Triton). Compute nodes are pointwise ops, reductions, a gather along the
last dim, values taken by an index tensor (take), and matmuls. Under the hybrid policy an aten op no template
expresses may stay a "library" node: a call of that op in PyTorch on tensors in memory, between the Triton
kernels. Capture (capture.py) builds it; plan.py cuts it into kernels.
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
SCANS = frozenset({"cumsum", "cumprod", "logcumsumexp"})  # running sums / products / log-sum-exps along one dim
# sorts and selections along one dim (codegen/sort.py): each a values node (attrs dim, descending) whose indices, where
# used, are a "sort_index" node of it
SORTS = frozenset({"sort", "topk", "median", "cummax", "cummin"})
SORT_MAX_N = 8192  # the longest row a sort or median holds in one tile (topk and cummax walk longer rows in tiles)
LEAVES = frozenset({"input", "param", "const", "size", "hostview"})


@dataclass(frozen=True)
class Ref:
    """In a library node's kept arguments (attrs call): its `index`-th tensor operand (node.args[index])."""

    index: int


class Device:
    """In a library node's kept arguments: the device argument (the capture's is meta), the operands' device."""

    def __repr__(self) -> str:
        return "DEVICE"


DEVICE = Device()


def library_ops(graph: Graph) -> list[str]:
    """The aten ops (aten.cumsum.default, …) the graph keeps as library calls, each once, in graph order."""
    found: list[str] = []
    for node in graph.nodes.values():
        if node.op == "library" and node.attrs["target"] not in found:
            found.append(node.attrs["target"])
    return found


# Names a node never takes: the emitted files' own variables (kernel locals, launcher locals, host helpers,
# modules), Python's keywords and builtins, and every name that ends like a variable the emitters derive from a
# node's name (`{node}_ptr`, `{node}_acc`, …). Node names are the variable names of the generated source, so
# this table (with `usable_name`) is what keeps them apart; nothing rewrites emitted text.
EMITTER_NAMES = frozenset(
    """a a_ptrs acc align arrived b b_ptrs base batch block_i block_n bm bn broadcast_shape c cb cdiv chan chunk
    ci co cols conv_out cstart d first_m g grid group_size grp hi i in_shape inner inner_mask j_rest jt k k_rest
    kk ks lo mask mask_k mask_m mask_n n n_idx n_inner nc next_power_of_2 nprog num_pid_m num_pid_n numel o_rest
    offs one_launch other out out_off outer p_rest part part_mask part_off part_ptr partial partial_ptr phase
    plane pred q q_rest r_rest rank red rk rm rn row row_mask row_off rows rows_in_group s shape shapes sid size
    sk sp spin_limit spins splits src st start start_o sync_ptr tap tile tiles tiles_c v valid valid_m w_tap
    width wk wv x_plane x_rows xcl xcl_ptr self torch triton tl math nn ctx launch grads packed ordered lanes best
    best_at outc nan_at carry carry_at at block_m""".split()
)
DERIVED_SUFFIXES = (
    "_acc _best _c_o _count _delta _dev _idx _ldev _m2 _mean _n _new _o _part _pcount _pdev _pm2 _pmean _prun "
    "_ptr _ptrs _rmean _run _s1 _sb _sc _si _sm _sn _so _sr _take _tcount _tile _tm2 _tmean _total _val _rest"
).split()


def usable_name(name: str) -> bool:
    """May a node be called `name`? (an identifier, not taken by the emitters, Python or a derived variable)"""
    import builtins
    import keyword
    import re

    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and not hasattr(builtins, name)
        and name not in EMITTER_NAMES
        and any(c.islower() for c in name)
        and not name.startswith("_")
        and not re.fullmatch(r"[a-z]+\d+|.*_s\d+", name)  # coord0, size1, k0, x_s0 (a stride), …
        and not re.fullmatch(r"(stride|size|inner|rinner|coord)_?\w*", name)
        and not name.endswith(("_forward", "_kernel"))
        and not any(name.endswith(s) for s in DERIVED_SUFFIXES)
    )


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
        if self.op in SCANS:
            return "scan"
        if self.op in SORTS:
            return "sort"
        return self.op  # gather, take, matmul, sort_index

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
    origin: dict[str, str] = field(default_factory=dict)  # node name -> the aten op it was lowered from

    def users(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {name: [] for name in self.nodes}
        for node in self.nodes.values():
            for arg in node.args:
                found[arg].append(node.name)
        return found

    def order(self) -> list[Node]:
        return list(self.nodes.values())
