"""Capture an operator's forward at aten level (make_fx) and lower it to the codegen IR.

High-level aten ops (softmax, layer/group/batch norm, losses, norms) are decomposed into primitive
pointwise ops and reductions, so one emitter per iteration space covers them all. Anything else is an
UnsupportedError naming the aten op, unless the capture was given it as a library op (the hybrid policy's
fallback, `library`): then it stays one "library" node, a call of the same op in PyTorch between the Triton
kernels (its operands written to memory first), as torch.compile keeps its fallbacks.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import fx, nn
from torch.func import functional_call
from torch.fx.experimental.proxy_tensor import make_fx
from torch.overrides import TorchFunctionMode

from foundry.codegen.ir import DEVICE, SORT_MAX_N, Graph, Node, Ref, UnsupportedError, usable_name

VIEW_OPS = {
    "view",
    "reshape",
    "_unsafe_view",
    "t",
    "transpose",
    "permute",
    "unsqueeze",
    "squeeze",
    "expand",
    "slice",
    "select",
}
IDENTITY_OPS = {"detach", "alias", "clone", "contiguous", "lift_fresh_copy", "lift_fresh", "dropout"}
SIMPLE_POINTWISE = {
    "neg": "neg",
    "exp": "exp",
    "log": "log",
    "sqrt": "sqrt",
    "rsqrt": "rsqrt",
    "abs": "abs",
    "relu": "relu",
    "sigmoid": "sigmoid",
    "tanh": "tanh",
    "erf": "erf",
    "reciprocal": "reciprocal",
    "log1p": "log1p",
    "expm1": "expm1",
    "sin": "sin",
    "cos": "cos",
    "sign": "sign",
    "floor": "floor",
    "ceil": "ceil",
    "silu": "silu",
    "mish": "mish",
    "hardsigmoid": "hardsigmoid",
    "hardswish": "hardswish",
    "logical_not": "logical_not",
    "square": "square",
    "maximum": "maximum",
    "minimum": "minimum",
    "lt": "lt",
    "gt": "gt",
    "le": "le",
    "ge": "ge",
    "eq": "eq",
    "ne": "ne",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "mul": "mul",
}


# The ops a tensor of one value (torch.ones, zeros, full) may feed: elementwise arithmetic, where it is a constant.
FILLED_USERS = frozenset({"add", "sub", "mul", "div", "where", "maximum", "minimum"})

# Ops that add values into a copy of their first operand (codegen/gather.py), which may be a filled tensor.
SCATTERS = frozenset({"scatter_add", "index_add"})

# The name a value of each op takes when its decomposition gives it none (node names are the generated
# source's variable names; builtins like sum, max and abs are never used as names).
LABELS = {
    "sum": "total",
    "max": "amax",
    "min": "amin",
    "abs": "absolute",
    "pow": "power",
    "gather": "picked",
    "matmul": "mm",
    "const": "const",
    "size": "count",
    "gparam": "chan",
}


def used_result(node: fx.Node, index: int) -> bool:
    """Does anything the graph returns depend on result `index` of a tuple-valued node (a pool's or a sort's
    indices)?"""

    def live(n: fx.Node) -> bool:
        return any(u.op == "output" or live(u) for u in n.users)

    return any(u.target is operator.getitem and u.args[1] == index and live(u) for u in node.users)


def capture_graph(model: nn.Module, inputs: Sequence[Any]) -> fx.GraphModule:
    """Trace model(*inputs) to an aten graph with fake tensors (no real compute, any size)."""
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}

    def call(params: dict[str, torch.Tensor], *args: Any) -> Any:
        with EinsumAsBmm():
            return functional_call(model, params, args)

    with torch.no_grad():
        return make_fx(call, tracing_mode="fake")(state, *inputs)


def einsum_as_bmm(equation: str, operands: Sequence[torch.Tensor]) -> torch.Tensor | None:
    """A two-operand einsum as one batched matmul between permutes and reshapes, the same graph at every size.
    (torch's own lowering treats dims of size 1 apart, so a capture at a batch of 1 would permute differently
    from one at the full sizes.) None for other forms (three operands, an ellipsis, a repeated or one-sided summed
    index): those take torch's."""
    a_sub, _, out = equation.replace(" ", "").partition("->")
    subs = a_sub.split(",")
    letters = "".join(subs)
    if (
        len(operands) != 2
        or len(subs) != 2
        or not out
        or "." in equation
        or any(len(set(sub)) != len(sub) for sub in (*subs, out))
        or any(letters.count(c) != 2 and c not in out for c in letters)
    ):
        return None
    (sa, sb), (a, b) = subs, operands
    batch = [c for c in out if c in sa and c in sb]
    left = [c for c in out if c in sa and c not in sb]
    right = [c for c in out if c in sb and c not in sa]
    summed = [c for c in sa if c in sb and c not in out]
    size = {**{c: a.shape[i] for i, c in enumerate(sa)}, **{c: b.shape[i] for i, c in enumerate(sb)}}

    def extent(dims: list[str]) -> int:
        return math.prod(size[c] for c in dims)

    def arranged(x: torch.Tensor, sub: str, dims: list[str]) -> torch.Tensor:
        order = [sub.index(c) for c in dims]
        return x if order == sorted(order) else x.permute(order)

    # contiguous, then view: one aten.view whether or not the permute left the layout contiguous (reshape would be
    # a view at some sizes and a copy with _unsafe_view at others)
    lhs = arranged(a, sa, batch + left + summed).contiguous().view(extent(batch), extent(left), extent(summed))
    rhs = arranged(b, sb, batch + summed + right).contiguous().view(extent(batch), extent(summed), extent(right))
    order = "".join(batch + left + right)
    return arranged(torch.bmm(lhs, rhs).view([size[c] for c in order]), order, list(out))


class EinsumAsBmm(TorchFunctionMode):
    """torch.einsum traced as einsum_as_bmm (torch's decomposition runs below make_fx's decomposition table)."""

    def __torch_function__(self, func: Any, types: Any, args: Sequence[Any] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if func is not torch.einsum or kwargs:
            return func(*args, **kwargs)
        equation, *operands = args
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
        found = einsum_as_bmm(equation, operands)
        return func(*args) if found is None else found


def norm_dims(dims: Any, rank: int) -> tuple[int, ...]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return tuple(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return tuple(sorted(d % rank if rank else 0 for d in dims))


def reduced_shape(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(torch.broadcast_shapes(*shapes))


class Lowerer:
    """Walks an aten graph and builds the IR. One instance per capture."""

    def __init__(
        self,
        gm: fx.GraphModule,
        state_keys: list[str],
        n_inputs: int,
        input_names: Sequence[str] = (),
        library: frozenset[str] = frozenset(),
    ) -> None:
        self.input_names = list(input_names)
        self.library = library  # aten op names (in-place ones with their "_") that may stay library calls
        self.calls = 0  # library calls made (each one's nodes share a call number)
        self.gm = gm
        self.state_keys = state_keys
        self.n_inputs = n_inputs
        self.nodes: dict[str, Node] = {}
        self.env: dict[fx.Node, Any] = {}
        self.claimed: set[str] = set()  # names set aside for nodes not made yet (the forward's inputs)
        self.graph = Graph(nodes=self.nodes, inputs=[], outputs=[])
        self.origin = ""  # the aten op being lowered (Graph.origin of the nodes it makes)

    # -- building blocks -----------------------------------------------------------------------

    def fresh(self, base: str) -> str:
        """`base`, or `base_2`, `base_3`, … : the first that no node has and usable_name allows."""
        base = "".join(c if c.isalnum() else "_" for c in base).strip("_") or "value"
        if base[0].isdigit():
            base = f"v{base}_"
        name, i = base, 1
        while name in self.nodes or name in self.claimed or not usable_name(name):
            i += 1
            name = f"{base}_{i}"
        return name

    def add(
        self,
        op: str,
        args: Sequence[str],
        shape: Sequence[int],
        dtype: torch.dtype,
        base: str = "",
        exact: str = "",
        **attrs: Any,
    ) -> str:
        if exact and exact not in self.nodes:
            name = exact
            self.claimed.discard(exact)
        else:
            name = self.fresh(base or LABELS.get(op, op))
        self.nodes[name] = Node(name, op, tuple(args), tuple(shape), dtype, dict(attrs))
        if self.origin:
            self.graph.origin[name] = self.origin
        return name

    def const(self, value: float | int | bool, dtype: torch.dtype = torch.float32, name: str = "") -> str:
        """A constant; a `name` (eps) makes it a named runtime parameter of the kernels rather than a literal."""
        if isinstance(value, bool):
            value = int(value)
        if name:
            return self.add("const", (), (), dtype, base=name, value=value, named=True)
        return self.add("const", (), (), dtype, value=value)

    def size(self, of: str, dims: tuple[int, ...], offset: float = 0.0) -> str:
        return self.add("size", (), (), torch.float32, of=of, dims=dims, offset=offset)

    def val(self, arg: Any) -> str:
        if isinstance(arg, fx.Node):
            value = self.env[arg]
            if not isinstance(value, str):
                raise UnsupportedError(str(arg.target), "a tuple result used as a tensor")
            return value
        if isinstance(arg, (int, float, bool)):
            return self.const(arg)
        raise UnsupportedError("operand", f"cannot use {type(arg).__name__} as an operand")

    def shape(self, name: str) -> tuple[int, ...]:
        return self.nodes[name].shape

    def pw(self, op: str, *args: str, dtype: torch.dtype = torch.float32, name: str = "", **attrs: Any) -> str:
        shape = broadcast(*(self.shape(a) for a in args))
        return self.add(op, args, shape, dtype, base=name, **attrs)

    def reduce(
        self,
        op: str,
        x: str,
        dims: tuple[int, ...],
        keepdim: bool = True,
        dtype: torch.dtype = torch.float32,
        name: str = "",
    ) -> str:
        shape = reduced_shape(self.shape(x), dims, keepdim)
        return self.add(op, (x,), shape, dtype, base=name, dims=dims, keepdim=keepdim)

    def mean(self, x: str, dims: tuple[int, ...], keepdim: bool = True, name: str = "mean") -> str:
        total = self.reduce("sum", x, dims, keepdim, name=f"{x}_sum" if len(x) <= 12 else "total")
        return self.pw("div", total, self.size(x, dims), name=name)

    def finish(self, value: str, node: fx.Node) -> str:
        """Give the last IR node of a decomposition the fx node's shape and dtype."""
        meta = node.meta.get("val")
        target = self.nodes[value]
        if isinstance(meta, torch.Tensor):
            target.shape = tuple(meta.shape)
            target.dtype = meta.dtype
        return value

    # -- the walk --------------------------------------------------------------------------------

    def lower(self) -> Graph:
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        n_state = len(placeholders) - self.n_inputs
        # the forward's arguments keep their names (as the kernels' tensors too); parameters and buffers take
        # the last part of their state_dict key where no other one shares it (weight, bias), else the whole key
        inputs = [self.input_label(i) for i in range(self.n_inputs)]
        self.claimed = {label for label in inputs if label}
        keys = self.state_keys[:n_state]
        tails = [k.split(".")[-1] for k in keys]
        for i, ph in enumerate(placeholders):
            meta = ph.meta.get("val")
            if not isinstance(meta, torch.Tensor):
                raise UnsupportedError("input", "non-tensor forward arguments are not supported")
            if i < n_state:
                key = self.state_keys[i]
                parts = key.split(".")
                if tails.count(parts[-1]) == 1:
                    label = parts[-1]
                elif parts[0][:1].isalpha():
                    label = "_".join(parts)
                else:  # a Sequential's numbered layers: weight_0, weight_2
                    label = "_".join([parts[-1], *parts[:-1]])
                name = self.add("param", (), meta.shape, meta.dtype, base=label, key=key)
                self.graph.params[name] = key
            else:
                index = i - n_state
                label = inputs[index]
                name = self.add("input", (), meta.shape, meta.dtype, base="x", exact=label, index=index)
                self.graph.inputs.append(name)
            self.env[ph] = name
        for node in self.gm.graph.nodes:
            if node.op in ("placeholder", "output"):
                continue
            if node.op != "call_function":
                raise UnsupportedError(str(node.target), f"fx node kind {node.op}")
            if not node.users:
                continue
            packet = getattr(node.target, "overloadpacket", None)
            self.origin = f"aten.{getattr(packet, '__name__', str(node.target)).split('.')[-1]}"
            self.env[node] = self.lower_node(node)
            self.origin = ""
        out = next(n for n in self.gm.graph.nodes if n.op == "output")
        results = out.args[0]
        if isinstance(results, fx.Node):
            results = [results]
        for r in results:
            if not isinstance(r, fx.Node) or not isinstance(self.env.get(r), str):
                raise UnsupportedError("output", "outputs must be tensors")
            self.graph.outputs.append(self.env[r])
        self.name_output()
        return self.graph

    def name_output(self) -> None:
        """A single output computed in the forward and named after its op (mul, relu) is called y."""
        if len(self.graph.outputs) != 1 or "y" in self.nodes:
            return
        old = self.graph.outputs[0]
        node = self.nodes[old]
        if node.op in ("input", "param", "const", "size") or old.split("_")[0] != LABELS.get(node.op, node.op):
            return
        renamed = {("y" if name == old else name): n for name, n in self.nodes.items()}
        self.nodes.clear()
        self.nodes.update(renamed)
        node.name = "y"
        for n in self.nodes.values():
            n.args = tuple("y" if a == old else a for a in n.args)
            if n.attrs.get("of") == old:
                n.attrs["of"] = "y"
            if n.op == "hostview" and n.attrs.get("params") == [old]:
                n.attrs["params"] = ["y"]
        self.graph.outputs[0] = "y"
        if old in self.graph.origin:
            self.graph.origin["y"] = self.graph.origin.pop(old)

    def input_label(self, index: int) -> str:
        """The forward argument's own name where usable_name allows it (else it is suffixed, e.g. mask_in)."""
        if index >= len(self.input_names):
            return ""
        name = self.input_names[index]
        return name if usable_name(name) else f"{name}_in" if usable_name(f"{name}_in") else ""

    def lower_node(self, node: fx.Node) -> Any:
        if node.target is operator.getitem:
            src, index = node.args
            return self.env[src][index]
        packet = getattr(node.target, "overloadpacket", None)
        name = getattr(packet, "__name__", str(node.target)).split(".")[-1]
        overload = getattr(node.target, "_overloadname", "")
        called = name
        if name.endswith("_") and not name.startswith("_"):
            name = name[:-1]  # in-place variants behave the same on fresh values
        try:
            return self.lower_op(node, name, overload)
        except UnsupportedError:
            if called not in self.library:
                raise
            return self.library_call(node, called, overload)

    def lower_op(self, node: fx.Node, name: str, overload: str) -> Any:
        args, kwargs = node.args, node.kwargs
        handler: Callable[..., Any] | None = getattr(self, f"op_{name.lstrip('_')}", None)
        if name in IDENTITY_OPS:
            return self.val(args[0])
        if name in VIEW_OPS:
            return self.view(name, node)
        if handler is not None:
            result = handler(node, *args, **kwargs)
            return self.finish(result, node) if isinstance(result, str) else result
        if name in SIMPLE_POINTWISE:
            ops = [self.val(a) for a in args if isinstance(a, (fx.Node, int, float, bool))]
            return self.finish(self.pw(SIMPLE_POINTWISE[name], *ops), node)
        raise UnsupportedError(f"aten.{name}.{overload or 'default'}", "no Triton template for this op")

    # -- the hybrid fallback: an op kept as a library call -----------------------------------------------

    def library_call(self, node: fx.Node, name: str, overload: str) -> str | tuple[str, ...]:
        """`node` as one library call (`name` as the graph has it, an in-place op with its "_"): a "library" node
        per tensor result, sharing the call's number; its tensor operands are the nodes' args (written to memory
        before the call), the rest of its arguments are kept as given (attrs call: Ref(i) for the i-th tensor
        operand, DEVICE for a device). Raises UnsupportedError where an operand is not a tensor in memory (a
        constant of the IR) or a result is not a tensor."""
        target = f"aten.{name}.{overload or 'default'}"
        tensors: list[str] = []

        def keep(arg: Any) -> Any:
            if isinstance(arg, fx.Node):
                value = self.env.get(arg)
                if not isinstance(value, str) or self.nodes[value].op in ("const", "size", "gparam"):
                    raise UnsupportedError(target, "a library call's operand is not a tensor in memory")
                if value not in tensors:
                    tensors.append(value)
                return Ref(tensors.index(value))
            if isinstance(arg, (list, tuple)):
                return type(arg)(keep(a) for a in arg)
            if isinstance(arg, torch.device):
                return DEVICE
            if arg is None or isinstance(arg, (bool, int, float, str, torch.dtype, torch.layout, torch.memory_format)):
                return arg
            raise UnsupportedError(target, f"a library call's argument of type {type(arg).__name__}")

        call = (keep(tuple(node.args)), {k: keep(v) for k, v in node.kwargs.items()})
        meta = node.meta.get("val")
        results = list(meta) if isinstance(meta, (list, tuple)) else [meta]
        if not results or not all(isinstance(r, torch.Tensor) for r in results):
            raise UnsupportedError(target, "a library call whose results are not tensors")
        returns = [r.name for r in node.target._schema.returns]  # type: ignore[union-attr]
        self.calls += 1
        made = []
        for i, result in enumerate(results):
            base = returns[i] if i < len(returns) and returns[i] and len(results) > 1 else name.strip("_")
            made.append(
                self.add(
                    "library",
                    tensors,
                    tuple(result.shape),
                    result.dtype,
                    base=base,
                    target=target,
                    method=name,
                    call=call,
                    group=self.calls,
                    index=i if isinstance(meta, (list, tuple)) else None,
                )
            )
        return tuple(made) if isinstance(meta, (list, tuple)) else made[0]

    def view(self, name: str, node: fx.Node) -> str:
        src = self.val(node.args[0])
        if name == "expand":
            return src  # broadcasting is implicit in the IR
        meta = node.meta["val"]
        inner = self.nodes[src]
        if (
            name == "squeeze"
            and inner.op == "hostview"
            and inner.attrs.get("view") == "unsqueeze"
            and tuple(meta.shape) == self.shape(inner.args[0])
        ):
            return inner.args[0]  # squeeze(unsqueeze(v)) is v (the 1d pools' round trip)
        params = [a for a in node.args[1:]]
        return self.add("hostview", (src,), meta.shape, meta.dtype, base=f"{src}_{name}", view=name, params=params)

    def op_split(self, node: fx.Node, x: Any, split_size: Any, dim: int = 0) -> list[str]:
        """torch.split / chunk: each piece a host view of the source, as slice is."""
        if not isinstance(split_size, int):
            raise UnsupportedError("aten.split", "only pieces of one size are supported")
        src = self.val(x)
        pieces = node.meta["val"]
        dim %= len(self.shape(src))
        return [
            self.add(
                "hostview",
                (src,),
                tuple(piece.shape),
                piece.dtype,
                base=f"{src}_part{i}",
                view="split",
                params=[dim, i, len(pieces), split_size],
            )
            for i, piece in enumerate(pieces)
        ]

    def op_unsafe_split(self, node: fx.Node, x: Any, split_size: Any, dim: int = 0) -> list[str]:
        return self.op_split(node, x, split_size, dim)

    # -- pointwise with options ------------------------------------------------------------------

    def op_add(self, node: fx.Node, a: Any, b: Any, alpha: Any = 1) -> str:
        rhs = self.val(b) if alpha == 1 else self.pw("mul", self.val(b), self.const(alpha))
        return self.pw("add", self.val(a), rhs)

    def op_sub(self, node: fx.Node, a: Any, b: Any, alpha: Any = 1) -> str:
        rhs = self.val(b) if alpha == 1 else self.pw("mul", self.val(b), self.const(alpha))
        return self.pw("sub", self.val(a), rhs)

    def op_rsub(self, node: fx.Node, a: Any, b: Any, alpha: Any = 1) -> str:
        return (
            self.op_sub(node, b, a, alpha)
            if alpha == 1
            else self.pw("sub", self.val(b), self.pw("mul", self.val(a), self.const(alpha)))
        )

    def op_div(self, node: fx.Node, a: Any, b: Any, rounding_mode: Any = None) -> str:
        if rounding_mode is not None:
            raise UnsupportedError("aten.div", f"rounding_mode={rounding_mode!r}")
        return self.pw("div", self.val(a), self.val(b))

    def op_where(self, node: fx.Node, cond: Any, a: Any, b: Any) -> str:
        return self.pw("where", self.val(cond), self.val(a), self.val(b))

    def op_scalar_tensor(self, node: fx.Node, value: Any, **kwargs: Any) -> str:
        return self.const(value)

    def filled(self, node: fx.Node, value: Any) -> str:
        """A tensor of one value (torch.ones, zeros, full and their _like / new_ forms): the constant, broadcast
        where it is used (the IR's broadcasting is implicit); one whose shape a reduction or the output would see
        is unsupported."""
        meta = node.meta["val"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UnsupportedError(str(node.target), f"fill value {value!r}")
        for user in node.users:
            packet = getattr(user.target, "overloadpacket", None)
            used_by = getattr(packet, "__name__", str(user.target)).split(".")[-1]
            if used_by in SCATTERS and user.args[0] is node:
                continue  # the values a scatter adds to: its output starts filled (op_scatter_add)
            if used_by not in FILLED_USERS:
                raise UnsupportedError(
                    str(node.target),
                    f"a filled tensor used by aten.{used_by} (only elementwise arithmetic takes it)",
                )
            others = [tuple(a.meta["val"].shape) for a in user.args if isinstance(a, fx.Node) and a is not node]
            if not others or tuple(user.meta["val"].shape) != broadcast(*others):
                raise UnsupportedError(str(node.target), "a filled tensor that sets the shape of its result")
        return self.const(float(value) if meta.dtype.is_floating_point else int(value), meta.dtype)

    def op_ones(self, node: fx.Node, *args: Any, **kwargs: Any) -> str:
        return self.filled(node, 1)

    def op_zeros(self, node: fx.Node, *args: Any, **kwargs: Any) -> str:
        return self.filled(node, 0)

    def op_full(self, node: fx.Node, size: Any, value: Any, **kwargs: Any) -> str:
        return self.filled(node, value)

    op_ones_like = op_new_ones = op_ones
    op_zeros_like = op_new_zeros = op_zeros

    def op_full_like(self, node: fx.Node, x: Any, value: Any, **kwargs: Any) -> str:
        return self.filled(node, value)

    def op_new_full(self, node: fx.Node, x: Any, size: Any, value: Any, **kwargs: Any) -> str:
        return self.filled(node, value)

    def op_gelu(self, node: fx.Node, x: Any, approximate: str = "none") -> str:
        return self.pw("gelu_tanh" if approximate == "tanh" else "gelu", self.val(x))

    def op_pow(self, node: fx.Node, x: Any, exponent: Any) -> str:
        if isinstance(x, (int, float)) or isinstance(exponent, fx.Node):
            raise UnsupportedError("aten.pow", "only tensor ** number is supported")
        if exponent not in (0.5, -0.5, 1, 2, 3, 4, -1, -2):
            raise UnsupportedError("aten.pow", f"exponent {exponent} (only small integers and ±0.5)")
        return self.pw("pow", self.val(x), exponent=float(exponent))

    def op_clamp(self, node: fx.Node, x: Any, lo: Any = None, hi: Any = None) -> str:
        if isinstance(lo, fx.Node) or isinstance(hi, fx.Node):
            value = self.val(x)
            if lo is not None:
                value = self.pw("maximum", value, self.val(lo))
            if hi is not None:
                value = self.pw("minimum", value, self.val(hi))
            return value
        return self.pw("clamp", self.val(x), lo=lo, hi=hi)

    def op_clamp_min(self, node: fx.Node, x: Any, lo: Any) -> str:
        return self.op_clamp(node, x, lo, None)

    def op_clamp_max(self, node: fx.Node, x: Any, hi: Any) -> str:
        return self.op_clamp(node, x, None, hi)

    def op_hardtanh(self, node: fx.Node, x: Any, lo: float = -1.0, hi: float = 1.0) -> str:
        return self.pw("clamp", self.val(x), lo=lo, hi=hi)

    def op_leaky_relu(self, node: fx.Node, x: Any, slope: float = 0.01) -> str:
        return self.pw("leaky_relu", self.val(x), slope=float(slope))

    def op_elu(self, node: fx.Node, x: Any, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> str:
        return self.pw("elu", self.val(x), alpha=float(alpha), scale=float(scale), input_scale=float(input_scale))

    def op_softplus(self, node: fx.Node, x: Any, beta: float = 1.0, threshold: float = 20.0) -> str:
        return self.pw("softplus", self.val(x), beta=float(beta), threshold=float(threshold))

    def op_to_copy(self, node: fx.Node, x: Any, **kwargs: Any) -> str:
        dtype = kwargs.get("dtype")
        value = self.val(x)
        if dtype is None or dtype == self.nodes[value].dtype:
            return self.pw("cast", value, dtype=self.nodes[value].dtype, to=self.nodes[value].dtype)
        return self.pw("cast", value, dtype=dtype, to=dtype)

    def op_xlogy(self, node: fx.Node, x: Any, y: Any) -> str:
        xv, yv = self.val(x), self.val(y)
        prod = self.pw("mul", xv, self.pw("log", yv))
        return self.pw("where", self.pw("eq", xv, self.const(0.0)), self.const(0.0), prod)

    # -- scans ------------------------------------------------------------------------------------

    def op_cumsum(self, node: fx.Node, x: Any, dim: int, dtype: Any = None) -> str:
        return self.scan("cumsum", node, x, dim)

    def op_cumprod(self, node: fx.Node, x: Any, dim: int, dtype: Any = None) -> str:
        return self.scan("cumprod", node, x, dim)

    def op_logcumsumexp(self, node: fx.Node, x: Any, dim: int) -> str:
        return self.scan("logcumsumexp", node, x, dim)

    def scan(self, op: str, node: fx.Node, x: Any, dim: int) -> str:
        """A running sum / product along `dim`. Over a flip along the same dim it is the flip of the reverse
        scan (cumsum(flip(x)) = flip(reverse cumsum(x))), so that flip(cumsum(flip(x))) needs no flip at all."""
        xv = self.val(x)
        rank = len(self.shape(xv))
        if rank == 0:
            raise UnsupportedError(f"aten.{op}.default", "a scan of a 0-d tensor")
        (d,) = norm_dims(dim, rank)
        meta = node.meta.get("val")
        dtype = meta.dtype if isinstance(meta, torch.Tensor) else self.nodes[xv].dtype
        src = self.nodes[xv]
        reverse = False
        if src.op == "flip" and src.attrs["dims"] == (d,):
            xv, reverse = src.args[0], True
        value = self.add(op, (xv,), self.shape(xv), dtype, dim=d, reverse=reverse)
        if reverse:
            return self.add("flip", (value,), self.shape(value), dtype, dims=(d,))
        return value

    def op_flip(self, node: fx.Node, x: Any, dims: Any) -> str:
        """Only around a scan along the same dim (see scan); a flip left in the graph is refused by the plan."""
        xv = self.val(x)
        d = norm_dims(dims, len(self.shape(xv)))
        src = self.nodes[xv]
        if src.op == "flip" and src.attrs["dims"] == d:
            return src.args[0]
        return self.add("flip", (xv,), self.shape(xv), src.dtype, dims=d)

    # -- sorts and selections along one dim (codegen/sort.py) -------------------------------------------------

    def op_sort(self, node: fx.Node, x: Any, dim: int = -1, descending: bool = False, stable: Any = None) -> tuple:
        """torch.sort / argsort / msort (aten.sort.default and .stable): values and indices along `dim`, tied values
        lowest index first (stable=True's order, which is also torch's default on CPU up to 16 elements a row)."""
        self.tie_order("sort", node, bool(stable))
        return self.sorted_along("sort", node, x, dim, bool(descending), bool(stable))

    def op_topk(self, node: fx.Node, x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple:
        """The k largest (smallest) values along `dim` in order, with their indices (tied values lowest index first).
        k is a named parameter of the kernel (it may follow a constructor argument)."""
        if not sorted:
            raise UnsupportedError("aten.topk.default", "sorted=False (torch leaves the k values in its own order)")
        if not isinstance(k, int) or not 0 <= k <= SORT_MAX_N:
            raise UnsupportedError("aten.topk.default", f"k={k!r} (a number up to {SORT_MAX_N})")
        self.tie_order("topk", node, False)
        top_k = self.add("const", (), (), torch.int64, base="top_k", value=k, named=True)
        return self.sorted_along("topk", node, x, dim, bool(largest), False, top_k)

    def op_median(self, node: fx.Node, x: Any, dim: Any = None, keepdim: bool = False) -> tuple:
        """aten.median.dim: the lower median ((n - 1) // 2 in an ascending stable sort) with its index; a row holding
        NaN gives NaN at its first NaN (torch's median, whose ties are broken by index too)."""
        if dim is None:
            raise UnsupportedError("aten.median.default", "the median of every element (only along one dim)")
        return self.sorted_along("median", node, x, dim, False, True)

    def op_cummax(self, node: fx.Node, x: Any, dim: int) -> tuple:
        """The running maximum along `dim` and the index where it was reached (the latest of tied values; NaN
        stays once met, at the latest NaN's index), as torch's."""
        return self.sorted_along("cummax", node, x, dim, True, True)

    def op_cummin(self, node: fx.Node, x: Any, dim: int) -> tuple:
        return self.sorted_along("cummin", node, x, dim, False, True)

    def tie_order(self, op: str, node: fx.Node, stable: bool) -> None:
        """Under the hybrid policy (`op` a library op), an unstable sort or a topk whose indices are used stays
        torch's own call: torch orders tied values as its implementation happens to (std::sort past 16 elements a
        row, nth_element for topk), which no kernel follows; the kernel's order (lowest index first) is kept for
        the strict policy."""
        if not stable and op in self.library and used_result(node, 1):
            raise UnsupportedError(f"aten.{op}", "the indices of tied values (torch's order is its implementation's)")

    def sorted_along(
        self, op: str, node: fx.Node, x: Any, dim: Any, descending: bool, stable: bool, *extra: str
    ) -> tuple[str, str]:
        """A sort-family node `op` over x along `dim` (its values) and a sort_index node of it (the indices)."""
        target = str(node.target)
        xv = self.val(x)
        src = self.nodes[xv]
        if src.op in ("const", "size"):
            raise UnsupportedError(target, "a constant input")
        if src.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            raise UnsupportedError(target, f"a {src.dtype} input (the kernel orders fp32, fp16 and bf16 values)")
        rank = len(src.shape)
        if rank == 0:
            raise UnsupportedError(target, "a 0-d input")
        d = int(dim) % rank
        if op in ("sort", "median") and src.shape[d] > SORT_MAX_N:
            raise UnsupportedError(
                target, f"rows of {src.shape[d]} elements (a sort holds a row in one tile: at most {SORT_MAX_N})"
            )
        values_meta, indices_meta = node.meta["val"]
        values = self.add(
            op,
            (xv, *extra),
            tuple(values_meta.shape),
            values_meta.dtype,
            base="values",
            dim=d,
            descending=descending,
            stable=stable,
        )
        indices = self.add("sort_index", (values,), tuple(indices_meta.shape), torch.int64, base="indices")
        return (values, indices)

    # -- indexing: values taken by an index tensor (codegen/gather.py) ---------------------------------------

    def op_embedding(
        self,
        node: fx.Node,
        weight: Any,
        indices: Any,
        padding_idx: int = -1,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> str:
        """The table's rows picked by the ids (padding_idx and the flags change only the gradient); picked by the
        positions 0..n-1 (an arange), its first n rows: a view of the table."""
        ids = self.nodes[self.val(indices)]
        if ids.op == "positions":
            table = self.val(weight)
            meta = node.meta["val"]
            count = ids.attrs["count"]
            return self.add(
                "hostview", (table,), meta.shape, meta.dtype, base=f"{table}_head", view="head", params=[count]
            )
        return self.take("aten.embedding.default", node, weight, indices, 0, "rows", "embedding")

    def op_arange(self, node: fx.Node, *args: Any, **kwargs: Any) -> str:
        """torch.arange. Where only embeddings read the positions 0..n-1 (learned position embeddings): those
        positions, which op_embedding turns into the table's first n rows. Otherwise a host view the launcher
        allocates (torch.arange on the operands' device: an allocation op, which the strict policy allows outside
        Triton), its bounds following the sizes (analyze.view_expression); the kernels read it from memory."""
        target = f"aten.arange.{node.target._overloadname}"  # type: ignore[union-attr]
        numbers = [a for a in args if isinstance(a, (int, float))]  # (end), (start, end) or (start, end, step)
        if len(numbers) != len(args) or not numbers:
            raise UnsupportedError(target, "bounds that are not numbers")
        start, end, step = (0, numbers[0], 1) if len(numbers) == 1 else (*numbers, 1)[:3]
        embedded = node.users and all(
            getattr(u.target, "overloadpacket", None) is torch.ops.aten.embedding and u.args[1] is node
            for u in node.users
        )
        meta = node.meta["val"]
        if (start, step) == (0, 1) and isinstance(end, int) and embedded:
            return self.add("positions", (), meta.shape, torch.int64, count=end)
        owners = [*self.graph.inputs, *self.graph.params]  # a tensor whose device the arange is allocated on
        if not owners:
            raise UnsupportedError(target, "no tensor operand to allocate it beside")
        return self.add(
            "hostview", (owners[0],), meta.shape, meta.dtype, base="arange", view="arange", params=[start, end, step]
        )

    def op_index_select(self, node: fx.Node, x: Any, dim: int, index: Any) -> str:
        return self.take("aten.index_select.default", node, x, index, dim, "rows", "index_select", flat=True)

    def op_index(self, node: fx.Node, x: Any, indices: Any) -> str:
        """x[idx], x[:, idx] (advanced indexing by one integer index tensor after full slices): the slices along
        that dim picked by the index, a negative index counting from the end as torch's do."""
        target = "aten.index.Tensor"
        given = [i for i, t in enumerate(indices) if t is not None]
        if len(given) != 1:
            raise UnsupportedError(target, f"{len(given)} index tensors (one index tensor is supported)")
        return self.take(target, node, x, indices[given[0]], given[0], "rows", "index", wrap=True)

    def op_gather(self, node: fx.Node, x: Any, dim: int, index: Any, sparse_grad: bool = False) -> str:
        return self.take("aten.gather.default", node, x, index, dim, "along", "gather")

    def take(
        self,
        target: str,
        node: fx.Node,
        x: Any,
        index: Any,
        dim: int,
        form: str,
        base: str,
        wrap: bool = False,
        flat: bool = False,
    ) -> str:
        """A take node: src's values picked by an integer index tensor along `dim`. form "rows": whole slices
        (out = src.shape[:dim] + index.shape + src.shape[dim + 1:]); "along": one value per index element (out =
        index.shape, at most src.shape outside `dim`). `wrap`: a negative index counts from the end; `flat`: the index
        counts as 1-d (index_select's 0-d index picks one slice and keeps the dim)."""
        xv, iv = self.val(x), self.val(index)
        src, idx = self.nodes[xv], self.nodes[iv]
        if src.op in ("const", "size") or idx.op in ("const", "size"):
            raise UnsupportedError(target, "a constant source or index (only tensors are indexed)")
        if idx.dtype not in (torch.int64, torch.int32):
            raise UnsupportedError(target, f"an index of dtype {idx.dtype} (int64 and int32 indices are supported)")
        rank = len(src.shape)
        if rank == 0:
            raise UnsupportedError(target, "a 0-d source")
        d = dim % rank
        if form == "along" and len(idx.shape) != rank:
            raise UnsupportedError(target, f"a {len(idx.shape)}-d index into a {rank}-d input")
        meta = node.meta["val"]
        return self.add(
            "take", (xv, iv), tuple(meta.shape), meta.dtype, base=base, dim=d, form=form, wrap=wrap, flat=flat
        )

    def op_scatter_add(self, node: fx.Node, x: Any, dim: int, index: Any, src: Any) -> str:
        """x.scatter_add(dim, index, src): src's values added into a copy of x at the index along dim, with
        tl.atomic_add. An index of src's shape adds each element (form "along"); an index (n, 1, ...) expanded over
        src's trailing dims (segment[:, None].expand(-1, C)) adds whole slices, as index_add does (form "rows")."""
        target = "aten.scatter_add.default"
        iv, sv = self.val(index), self.val(src)
        rank = len(self.shape(sv))
        d = dim % max(rank, 1)
        shape = self.shape(iv)
        if shape == self.shape(sv):
            form = "along"
        elif d == 0 and len(shape) == rank and all(s == 1 for s in shape[1:]):
            form = "rows"
        else:
            raise UnsupportedError(target, f"an index of shape {list(shape)} for a source of {list(self.shape(sv))}")
        return self.scatter(target, node, x, iv, sv, d, form)

    def op_index_add(self, node: fx.Node, x: Any, dim: int, index: Any, source: Any, alpha: Any = 1) -> str:
        sv = self.val(source) if alpha == 1 else self.pw("mul", self.val(source), self.const(alpha))
        d = dim % max(len(self.shape(sv)), 1)
        return self.scatter("aten.index_add.default", node, x, self.val(index), sv, d, "rows")

    def scatter(self, target: str, node: fx.Node, x: Any, iv: str, sv: str, d: int, form: str) -> str:
        """A scatter node (args index, source, base, and for a filled base the output's size along the dim, a
        constant that may follow the constructor's arguments): the output is a copy of the base (a new tensor for
        a filled one), the source's values added at the index along dim `d`."""
        base = self.val(x)
        if self.nodes[iv].dtype not in (torch.int64, torch.int32):
            raise UnsupportedError(target, f"an index of dtype {self.nodes[iv].dtype}")
        meta = node.meta["val"]
        if meta.dtype != torch.float32 or len(meta.shape) == 0:
            raise UnsupportedError(target, f"a {len(meta.shape)}-d {meta.dtype} output (fp32 atomic adds only)")
        if any(meta.shape[k] != self.shape(sv)[k] for k in range(len(meta.shape)) if k != d):
            raise UnsupportedError(target, f"an output of {list(meta.shape)} for a source of {list(self.shape(sv))}")
        args = (iv, sv, base)
        if self.nodes[base].op == "const":
            args += (self.add("const", (), (), torch.int64, base="dim_size", value=int(meta.shape[d])),)
        elif self.nodes[base].op == "size":
            raise UnsupportedError(target, "a base of a size")
        return self.add("scatter", args, tuple(meta.shape), meta.dtype, dim=d, form=form)

    def op_masked_fill(self, node: fx.Node, x: Any, mask: Any, value: Any) -> str:
        """masked_fill(mask, value): where(mask, value, x) (a 0-d tensor value as well as a number)."""
        return self.pw("where", self.val(mask), self.val(value), self.val(x))

    # -- reductions -------------------------------------------------------------------------------

    def op_sum(self, node: fx.Node, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = None) -> str:
        xv = self.val(x)
        return self.reduce("sum", xv, norm_dims(dims, len(self.shape(xv))), keepdim)

    def op_mean(self, node: fx.Node, x: Any, dims: Any = None, keepdim: bool = False, dtype: Any = None) -> str:
        xv = self.val(x)
        return self.mean(xv, norm_dims(dims, len(self.shape(xv))), keepdim)

    def op_amax(self, node: fx.Node, x: Any, dims: Any = (), keepdim: bool = False) -> str:
        xv = self.val(x)
        return self.reduce("max", xv, norm_dims(dims, len(self.shape(xv))), keepdim)

    def op_amin(self, node: fx.Node, x: Any, dims: Any = (), keepdim: bool = False) -> str:
        xv = self.val(x)
        return self.reduce("min", xv, norm_dims(dims, len(self.shape(xv))), keepdim)

    def op_max(self, node: fx.Node, x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        return self.minmax("max", x, dim, keepdim)

    def op_min(self, node: fx.Node, x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        return self.minmax("min", x, dim, keepdim)

    def minmax(self, op: str, x: Any, dim: Any, keepdim: bool) -> Any:
        xv = self.val(x)
        rank = len(self.shape(xv))
        if dim is None:
            return self.reduce(op, xv, tuple(range(rank)), False)
        dims = norm_dims(dim, rank)
        values = self.reduce(op, xv, dims, keepdim)
        index = self.reduce("arg" + op, xv, dims, keepdim, dtype=torch.int64)
        return (values, index)

    def op_argmax(self, node: fx.Node, x: Any, dim: Any = None, keepdim: bool = False) -> str:
        return self.argminmax("argmax", x, dim, keepdim)

    def op_argmin(self, node: fx.Node, x: Any, dim: Any = None, keepdim: bool = False) -> str:
        return self.argminmax("argmin", x, dim, keepdim)

    def argminmax(self, op: str, x: Any, dim: Any, keepdim: bool) -> str:
        xv = self.val(x)
        if dim is None:
            raise UnsupportedError(f"aten.{op}", "an index into the flattened tensor (dim=None)")
        return self.reduce(op, xv, norm_dims(dim, len(self.shape(xv))), keepdim, dtype=torch.int64)

    def op_var(
        self, node: fx.Node, x: Any, dims: Any = None, correction: Any = 1, keepdim: bool = False, **kw: Any
    ) -> str:
        return self.variance(x, dims, correction, keepdim)

    def op_std(
        self, node: fx.Node, x: Any, dims: Any = None, correction: Any = 1, keepdim: bool = False, **kw: Any
    ) -> str:
        return self.pw("sqrt", self.variance(x, dims, correction, keepdim), name="std")

    def variance(self, x: Any, dims: Any, correction: Any, keepdim: bool) -> str:
        xv = self.val(x)
        d = norm_dims(dims, len(self.shape(xv)))
        centered = self.pw("sub", xv, self.mean(xv, d), name="centered")
        total = self.reduce("sum", self.pw("mul", centered, centered, name="sq"), d, keepdim, name="sq_sum")
        corr = 1.0 if correction is None else float(correction)
        return self.pw("div", total, self.size(xv, d, offset=corr), name="var")

    def op_logsumexp(self, node: fx.Node, x: Any, dims: Any, keepdim: bool = False) -> str:
        xv = self.val(x)
        d = norm_dims(dims, len(self.shape(xv)))
        peak = self.reduce("max", xv, d, name="x_max")
        total = self.reduce("sum", self.pw("exp", self.pw("sub", xv, peak, name="shifted")), d, name="sum_exp")
        return self.pw("add", self.pw("log", total, name="log_sum"), peak, name="lse")

    def op_linalg_vector_norm(
        self, node: fx.Node, x: Any, ord: Any = 2, dims: Any = None, keepdim: bool = False, **kw: Any
    ) -> str:
        xv = self.val(x)
        d = norm_dims(dims, len(self.shape(xv)))
        if ord == 2:
            squares = self.reduce("sum", self.pw("mul", xv, xv, name="sq"), d, keepdim, name="sq_sum")
            return self.pw("sqrt", squares, name="norm")
        if ord == 1:
            return self.reduce("sum", self.pw("abs", xv), d, keepdim)
        if ord == math.inf:
            return self.reduce("max", self.pw("abs", xv), d, keepdim)
        if ord == -math.inf:
            return self.reduce("min", self.pw("abs", xv), d, keepdim)
        raise UnsupportedError("aten.linalg_vector_norm", f"ord={ord} (supported: 1, 2, inf, -inf)")

    # -- normalizations ----------------------------------------------------------------------------

    def op_softmax(self, node: fx.Node, x: Any, dim: int, half_to_float: bool = False) -> str:
        xv = self.val(x)
        d = norm_dims(dim, len(self.shape(xv)))
        shifted = self.pw("sub", xv, self.reduce("max", xv, d, name="x_max"), name="shifted")
        num = self.pw("exp", shifted, name="numer")
        return self.pw("div", num, self.reduce("sum", num, d, name="denom"), name="y")

    def op_log_softmax(self, node: fx.Node, x: Any, dim: int, half_to_float: bool = False) -> str:
        xv = self.val(x)
        d = norm_dims(dim, len(self.shape(xv)))
        shifted = self.pw("sub", xv, self.reduce("max", xv, d, name="x_max"), name="shifted")
        total = self.reduce("sum", self.pw("exp", shifted), d, name="sum_exp")
        return self.pw("sub", shifted, self.pw("log", total, name="log_sum"), name="y")

    def normalize(self, xv: str, d: tuple[int, ...], eps: Any) -> tuple[str, str, str]:
        count = self.size(xv, d)
        total = self.reduce("sum", xv, d, name=f"{xv}_sum" if len(xv) <= 12 else "total")
        mean = self.pw("div", total, count, name="mean")
        centered = self.pw("sub", xv, mean, name="centered")
        squares = self.reduce("sum", self.pw("mul", centered, centered, name="sq"), d, name="sq_sum")
        var = self.pw("div", squares, count, name="var")
        rstd = self.pw("rsqrt", self.pw("add", var, self.const(eps, name="eps"), name="var_eps"), name="rstd")
        return self.pw("mul", centered, rstd, name="x_hat"), mean, rstd

    def op_native_layer_norm(self, node: fx.Node, x: Any, shape: Any, w: Any, b: Any, eps: float) -> tuple:
        xv = self.val(x)
        rank = len(self.shape(xv))
        d = tuple(range(rank - len(shape), rank))
        y, mean, rstd = self.normalize(xv, d, eps)
        if w is not None:
            y = self.pw("mul", y, self.val(w), name="y" if b is None else "scaled")
        if b is not None:
            y = self.pw("add", y, self.val(b), name="y")
        self.finish(y, node)
        meta = node.meta["val"]
        self.nodes[y].shape, self.nodes[y].dtype = tuple(meta[0].shape), meta[0].dtype
        return (y, mean, rstd)

    def op_native_group_norm(
        self, node: fx.Node, x: Any, w: Any, b: Any, n: int, c: int, hw: int, groups: int, eps: float
    ) -> tuple:
        xv = self.val(x)
        meta = node.meta["val"][0]
        shape = (n, groups, (c // groups) * hw)
        grouped = self.add("hostview", (xv,), shape, meta.dtype, base=f"{xv}_groups", view="groups", params=[groups])
        y, mean, rstd = self.normalize(grouped, (2,), eps)
        for param, op in ((w, "mul"), (b, "add")):
            if param is not None:
                pv = self.val(param)
                chan = self.add("gparam", (pv,), self.shape(grouped), meta.dtype, base=f"{pv}_chan")
                y = self.pw(op, y, chan, name="y_groups" if op == "add" or b is None else "scaled")
        out = self.add("hostview", (y,), tuple(meta.shape), meta.dtype, base="y", view="like", params=[xv])
        return (out, mean, rstd)

    def op_native_batch_norm(
        self, node: fx.Node, x: Any, w: Any, b: Any, mean: Any, var: Any, training: bool, momentum: float, eps: float
    ) -> tuple:
        if mean is None and var is None:
            return self.batch_statistics(node, x, w, b, eps)
        if training or mean is None or var is None:
            raise UnsupportedError("aten.native_batch_norm", "batch statistics (training mode)")
        return self.batch_norm(node, x, w, b, mean, var, eps)

    def op_native_batch_norm_legit_no_training(
        self, node: fx.Node, x: Any, w: Any, b: Any, mean: Any, var: Any, momentum: float, eps: float
    ) -> tuple:
        return self.batch_norm(node, x, w, b, mean, var, eps)

    def batch_statistics(self, node: fx.Node, x: Any, w: Any, b: Any, eps: float) -> tuple:
        """Batch norm with batch statistics over (batch, spatial dims). Instance norm reaches this as a batch
        norm of a (1, N*C, *spatial) view: the batch dim is 1, so the statistics are per row of the trailing
        dims (a row kernel). A real batch (dims 0 and 2..) is not contiguous: unsupported."""
        xv = self.val(x)
        shape = self.shape(xv)
        if shape[0] != 1:
            raise UnsupportedError(
                "aten.native_batch_norm", "batch statistics over (batch, spatial) dims (training-mode batch norm)"
            )
        if w is not None or b is not None:
            raise UnsupportedError("aten.native_batch_norm", "an affine instance norm (weights repeated per sample)")
        y, mean, rstd = self.normalize(xv, tuple(range(2, len(shape))), eps)
        self.finish(y, node)
        meta = node.meta["val"]
        self.nodes[y].shape, self.nodes[y].dtype = tuple(meta[0].shape), meta[0].dtype
        return (y, mean, rstd)

    def batch_norm(self, node: fx.Node, x: Any, w: Any, b: Any, mean: Any, var: Any, eps: float) -> tuple:
        xv = self.val(x)
        rank = len(self.shape(xv))

        def chan(p: Any) -> str:
            pv = self.val(p)
            shape = (self.shape(pv)[0],) + (1,) * (rank - 2)
            return self.add(
                "hostview", (pv,), shape, self.nodes[pv].dtype, base=f"{pv}_chan", view="channel", params=[rank - 2]
            )

        var_eps = self.pw("add", chan(var), self.const(eps, name="eps"), name="var_eps")
        rstd = self.pw("rsqrt", var_eps, name="rstd")
        y = self.pw("mul", self.pw("sub", xv, chan(mean), name="centered"), rstd, name="x_hat")
        if w is not None:
            y = self.pw("mul", y, chan(w), name="y" if b is None else "scaled")
        if b is not None:
            y = self.pw("add", y, chan(b), name="y")
        self.finish(y, node)
        return (y, y, y)

    # -- losses ------------------------------------------------------------------------------------

    def reduction(self, value: str, mode: int) -> str:
        if mode == 0:
            return value
        rank = len(self.shape(value))
        total = self.reduce("sum", value, tuple(range(rank)), False, name="loss_sum")
        return total if mode == 2 else self.pw("div", total, self.size(value, tuple(range(rank))), name="loss")

    def op_mse_loss(self, node: fx.Node, a: Any, b: Any, reduction: int = 1) -> str:
        diff = self.pw("sub", self.val(a), self.val(b), name="diff")
        return self.reduction(self.pw("mul", diff, diff, name="sq_err"), reduction)

    def op_l1_loss(self, node: fx.Node, a: Any, b: Any, reduction: int = 1) -> str:
        return self.reduction(self.pw("abs", self.pw("sub", self.val(a), self.val(b))), reduction)

    def op_smooth_l1_loss(self, node: fx.Node, a: Any, b: Any, reduction: int = 1, beta: float = 1.0) -> str:
        diff = self.pw("abs", self.pw("sub", self.val(a), self.val(b)))
        if beta == 0:
            return self.reduction(diff, reduction)
        quad = self.pw("div", self.pw("mul", self.pw("mul", diff, diff), self.const(0.5)), self.const(beta))
        lin = self.pw("sub", diff, self.const(0.5 * beta))
        return self.reduction(self.pw("where", self.pw("lt", diff, self.const(beta)), quad, lin), reduction)

    def op_huber_loss(self, node: fx.Node, a: Any, b: Any, reduction: int = 1, delta: float = 1.0) -> str:
        diff = self.pw("abs", self.pw("sub", self.val(a), self.val(b)))
        quad = self.pw("mul", self.pw("mul", diff, diff), self.const(0.5))
        lin = self.pw("mul", self.pw("sub", diff, self.const(0.5 * delta)), self.const(delta))
        return self.reduction(self.pw("where", self.pw("lt", diff, self.const(delta)), quad, lin), reduction)

    def op_binary_cross_entropy_with_logits(
        self, node: fx.Node, x: Any, y: Any, weight: Any = None, pos_weight: Any = None, reduction: int = 1
    ) -> str:
        if weight is not None or pos_weight is not None:
            raise UnsupportedError("aten.binary_cross_entropy_with_logits", "weight / pos_weight")
        xv, yv = self.val(x), self.val(y)
        # (1 - y) * x + softplus(-x), written stably: max(x, 0) - x * y + log1p(exp(-|x|))
        stable = self.pw("log1p", self.pw("exp", self.pw("neg", self.pw("abs", xv))))
        loss = self.pw("add", self.pw("sub", self.pw("relu", xv), self.pw("mul", xv, yv)), stable)
        return self.reduction(loss, reduction)

    def op_nll_loss_forward(
        self, node: fx.Node, logp: Any, target: Any, weight: Any, reduction: int, ignore_index: int
    ) -> tuple:
        if weight is not None:
            raise UnsupportedError("aten.nll_loss_forward", "class weights")
        lp, tv = self.val(logp), self.val(target)
        if len(self.shape(lp)) != 2:
            raise UnsupportedError("aten.nll_loss_forward", "only (batch, classes) inputs")
        picked = self.add("gather", (lp, tv), self.shape(tv), torch.float32, base="picked")
        valid = self.pw("ne", tv, self.const(ignore_index), name="kept")
        loss = self.pw("where", valid, self.pw("neg", picked, name="nll"), self.const(0.0), name="nll_kept")
        if reduction == 0:
            return (loss, loss)
        total = self.reduce("sum", loss, (0,), False)
        if reduction == 2:
            return (total, total)
        count = self.reduce("sum", self.pw("cast", valid, dtype=torch.float32, to=torch.float32), (0,), False)
        return (self.pw("div", total, count), count)

    # -- matmul ------------------------------------------------------------------------------------

    def op_mm(self, node: fx.Node, a: Any, b: Any) -> str:
        return self.matmul(self.val(a), self.val(b))

    def op_bmm(self, node: fx.Node, a: Any, b: Any) -> str:
        return self.matmul(self.val(a), self.val(b))

    def matmul(self, a: str, b: str) -> str:
        sa, sb = self.shape(a), self.shape(b)
        shape = sa[:-1] + sb[-1:]
        return self.add("matmul", (a, b), shape, self.nodes[a].dtype, base="mm")

    def op_addmm(self, node: fx.Node, bias: Any, a: Any, b: Any, beta: Any = 1, alpha: Any = 1) -> str:
        out = self.matmul(self.val(a), self.val(b))
        if alpha != 1:
            out = self.pw("mul", out, self.const(alpha))
        bv = self.val(bias)
        if beta != 1:
            bv = self.pw("mul", bv, self.const(beta))
        return self.pw("add", out, bv, name="mm_bias")

    def op_baddbmm(self, node: fx.Node, bias: Any, a: Any, b: Any, beta: Any = 1, alpha: Any = 1) -> str:
        return self.op_addmm(node, bias, a, b, beta, alpha)

    # -- convolution and pooling (codegen/conv.py, codegen/pool.py) -------------------------------------

    def op_convolution(
        self,
        node: fx.Node,
        x: Any,
        w: Any,
        bias: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        transposed: bool,
        output_padding: Any,
        groups: int,
    ) -> str:
        xv, wv = self.val(x), self.val(w)
        rank = len(self.shape(xv))
        if rank not in (3, 4, 5) or len(self.shape(wv)) != rank:
            raise UnsupportedError(
                "aten.convolution", f"a rank-{rank} input (supported: conv1d/2d/3d with a batch dim)"
            )
        if self.nodes[xv].dtype != torch.float32 or self.nodes[wv].dtype != torch.float32:
            raise UnsupportedError("aten.convolution", f"dtype {self.nodes[xv].dtype} (the templates are fp32)")
        d = rank - 2

        def ints(v: Any, fill: int) -> list[int]:
            values = [int(i) for i in (v if isinstance(v, (list, tuple)) else [v])] or [fill]
            return values * d if len(values) == 1 else values

        meta = node.meta["val"]
        out = self.add(
            "conv",
            (xv, wv),
            tuple(meta.shape),
            meta.dtype,
            base="conv",
            stride=ints(stride, 1),
            padding=ints(padding, 0),
            dilation=ints(dilation, 1),
            transposed=bool(transposed),
            output_padding=ints(output_padding, 0),
            groups=int(groups),
        )
        if bias is None:
            return out
        bv = self.val(bias)
        shape = (self.shape(bv)[0],) + (1,) * d
        chan = self.add("hostview", (bv,), shape, meta.dtype, base=f"{bv}_chan", view="channel", params=[d])
        return self.pw("add", out, chan, name="conv_bias")

    def pool(
        self,
        node: fx.Node,
        mode: str,
        x: Any,
        kernel: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        ceil_mode: bool,
        count_include_pad: bool = True,
        divisor: Any = None,
    ) -> str:
        xv = self.val(x)
        d = len(self.shape(xv)) - 2
        name = f"aten.{node.target.overloadpacket.__name__}"  # type: ignore[union-attr]
        if ceil_mode:
            raise UnsupportedError(name, "ceil_mode=True (only floor-mode output sizes have a template)")
        if d < 1 or d > 3:
            raise UnsupportedError(name, f"a rank-{d + 2} input")

        def ints(v: Any, fill: int) -> list[int]:
            values = [int(i) for i in (v if isinstance(v, (list, tuple)) else [v])] or [fill]
            return values * d if len(values) == 1 else values

        kernel_l = ints(kernel, 1)
        attrs = dict(
            mode=mode,
            kernel=kernel_l,
            stride=ints(stride, 1) if stride not in (None, [], ()) else list(kernel_l),
            padding=ints(padding, 0),
            dilation=ints(dilation, 1),
            count_include_pad=bool(count_include_pad),
            divisor=None if divisor is None else int(divisor),
        )
        meta = node.meta["val"]
        meta = meta[0] if isinstance(meta, (list, tuple)) else meta
        src = self.nodes[xv]
        if (
            d == 2
            and src.op == "hostview"
            and src.attrs.get("view") == "unsqueeze"
            and src.attrs["params"][0] in (-2, 2)
            and len(self.shape(src.args[0])) == 3
            and (attrs["kernel"][0], attrs["stride"][0], attrs["padding"][0]) == (1, 1, 0)
        ):
            # a 1d pool reaches aten as unsqueeze(-2) → 2d pool → squeeze(-2): pool the 3-d tensor itself
            one = {k: v[1:] if isinstance(v, list) else v for k, v in attrs.items()}
            out_shape = tuple(meta.shape[:2]) + tuple(meta.shape[3:])
            pooled = self.add("pool", (src.args[0],), out_shape, meta.dtype, base="pool", **one)
            return self.add(
                "hostview", (pooled,), tuple(meta.shape), meta.dtype, base=f"{pooled}_4d", view="unsqueeze", params=[-2]
            )
        return self.add("pool", (xv,), tuple(meta.shape), meta.dtype, base="pool", **attrs)

    def max_pool(
        self,
        node: fx.Node,
        x: Any,
        kernel: Any,
        stride: Any = (),
        padding: Any = 0,
        dilation: Any = 1,
        ceil_mode: bool = False,
    ) -> tuple:
        if used_result(node, 1):
            raise UnsupportedError(
                f"aten.{node.target.overloadpacket.__name__}",  # type: ignore[union-attr]
                "return_indices=True (the argmax indices output has no template)",
            )
        out = self.pool(node, "max", x, kernel, stride, padding, dilation, ceil_mode)
        return (out, out)

    def op_max_pool2d_with_indices(self, node: fx.Node, *args: Any) -> tuple:
        return self.max_pool(node, *args)

    def op_max_pool3d_with_indices(self, node: fx.Node, *args: Any) -> tuple:
        return self.max_pool(node, *args)

    def op_max_pool2d(self, node: fx.Node, *args: Any) -> str:
        return self.max_pool(node, *args)[0]

    def op_avg_pool2d(
        self,
        node: fx.Node,
        x: Any,
        kernel: Any,
        stride: Any = (),
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: Any = None,
    ) -> str:
        return self.pool(node, "avg", x, kernel, stride, padding, 1, ceil_mode, count_include_pad, divisor_override)

    def op_avg_pool3d(self, node: fx.Node, *args: Any) -> str:
        return self.op_avg_pool2d(node, *args)

    def op_avg_pool1d(self, node: fx.Node, *args: Any) -> str:
        return self.op_avg_pool2d(node, *args)

    def padding_mode(self, node: fx.Node, *args: Any) -> str:
        name = node.target.overloadpacket.__name__  # type: ignore[union-attr]
        mode = "reflect" if "reflection" in name else "replicate"
        raise UnsupportedError(
            f"aten.{name}",
            f"{mode} padding (a convolution's padding_mode={mode!r} or F.pad mode={mode!r}): "
            "only zero padding has a template",
        )

    op_reflection_pad1d = op_reflection_pad2d = op_reflection_pad3d = padding_mode
    op_replication_pad1d = op_replication_pad2d = op_replication_pad3d = padding_mode

    def op_new_empty(self, node: fx.Node, *args: Any, **kwargs: Any) -> str:
        raise UnsupportedError(
            "aten.new_empty",
            "a buffer written in place (e.g. a convolution's padding_mode='circular'): no template",
        )

    def op_constant_pad_nd(self, node: fx.Node, *args: Any) -> str:
        raise UnsupportedError(
            "aten.constant_pad_nd", "explicit padding (e.g. padding='same' with an even kernel): no template"
        )

    def op_adaptive_avg_pool2d(self, node: fx.Node, x: Any, size: Any) -> str:
        xv = self.val(x)
        if list(size) != [1] * len(size):
            raise UnsupportedError("aten.adaptive_avg_pool2d", f"output size {list(size)} (only 1 = a global mean)")
        rank = len(self.shape(xv))
        return self.mean(xv, tuple(range(rank - len(size), rank)), True)


def lower(
    gm: fx.GraphModule,
    state_keys: list[str],
    n_inputs: int,
    input_names: Sequence[str] = (),
    library: frozenset[str] = frozenset(),
) -> Graph:
    return Lowerer(gm, state_keys, n_inputs, input_names, library).lower()


def capture(
    model: nn.Module, inputs: Sequence[Any], input_names: Sequence[str] = (), library: frozenset[str] = frozenset()
) -> Graph:
    """Model + example inputs → IR graph. Raises UnsupportedError. `library`: aten op names (as the graph has them:
    cumsum, scatter_add_) that stay library calls where no template expresses them (the hybrid policy)."""
    model = model.eval()
    keys = [k for k, _ in model.named_parameters()] + [k for k, _ in model.named_buffers()]
    state = set(model.state_dict().keys())
    gm = capture_graph(model, inputs)
    graph = lower(gm, keys, len(inputs), input_names, library)
    for key in graph.params.values():
        if key not in state:
            raise UnsupportedError(key, "a non-persistent buffer: its value is not in the state_dict")
    return graph
