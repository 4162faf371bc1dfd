"""Capture an operator at every declared size (CPU shapes, full shapes, shape variants) and merge the
captures into one size-independent description: literals that change between captures become
expressions of constructor arguments or input sizes, or the operator is unsupported."""

from __future__ import annotations

import ast
import builtins
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn

from foundry.codegen.capture import capture
from foundry.codegen.conv import CHANNEL_TILE, GEMM_MIN_CHANNELS
from foundry.codegen.ir import DEVICE, Graph, Node, Ref, UnsupportedError, library_ops
from foundry.codegen.plan import PlanOptions, Segment, plan

log = logging.getLogger(__name__)


@dataclass
class Analysis:
    """What rendering needs, for any size the operator declares."""

    name: str  # identifier-safe operator slug
    class_name: str
    path: str
    dtype: str
    precision: str
    graph: Graph
    segments: list[Segment]
    init_params: str  # the reference constructor's parameter list, verbatim (after self)
    init_args: list[str]
    forward_args: list[str]
    params: dict[str, tuple[list[str], torch.dtype, bool]]  # state key → (shape exprs, dtype, is_buffer)
    const_exprs: dict[str, str] = field(default_factory=dict)  # const node → forward expression
    view_exprs: dict[str, str] = field(default_factory=dict)  # hostview node → expression of `{src}`
    stored_args: list[str] = field(default_factory=list)  # constructor args kept on self
    # the reference constructor's statements and the imports they need (init_body), or None: empty parameters
    init_source: tuple[list[str], list[str]] | None = None
    full_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # node → shape at the full inputs
    channel_convs: frozenset[str] = frozenset()  # convs whose output channels fit one GEMM tile (PlanOptions)
    # node → its shape at every declared size (CPU, full, variants): the shapes verification runs
    capture_shapes: dict[str, tuple[tuple[int, ...], ...]] = field(default_factory=dict)
    # library node (the first result of each call the hybrid policy keeps) → the call, an expression of its
    # tensor operands `{0}`, `{1}`, … and `{device}` (library_expression)
    library_exprs: dict[str, str] = field(default_factory=dict)

    def library_ops(self) -> list[str]:
        """The aten ops kept as library calls between the Triton kernels (hybrid policy), each once."""
        return library_ops(self.graph)

    def row_extents(self) -> list[tuple[int, int]]:
        """(rows, row length) of each row segment at the operator's full (GPU) inputs."""
        found = []
        for seg in self.segments:
            shape = self.full_shapes.get(seg.base_of)
            if seg.kind != "row" or shape is None:
                continue
            k = len(seg.dims)
            found.append((math.prod(shape[: len(shape) - k]), math.prod(shape[len(shape) - k :])))
        return found

    def col_extents(self) -> list[tuple[int, int, int]]:
        """(outer, reduced, inner) sizes of each middle-dim reduction segment at the operator's full (GPU) inputs."""
        found = []
        for seg in self.segments:
            shape = self.full_shapes.get(seg.base_of)
            if seg.kind != "col" or shape is None or len(shape) != len(seg.base):
                continue
            d0, d1 = seg.dims[0], seg.dims[-1] + 1
            found.append((math.prod(shape[:d0]), math.prod(shape[d0:d1]), math.prod(shape[d1:])))
        return found

    def conv_groups(self) -> list[tuple[Node, int, int, bool]]:
        """(node, output channels per group, in-channels per group, wide enough for the implicit GEMM) of
        each convolution at the full inputs: a group at least one tl.dot tile wide in channels and in
        in-channels x taps."""
        found = []
        for node in self.graph.nodes.values():
            if node.op != "conv":
                continue
            w = self.full_shapes.get(node.args[1]) or self.graph.nodes[node.args[1]].shape  # at the GPU size
            groups = int(node.attrs["groups"])
            cog, cig = (w[1], w[0] // groups) if node.attrs["transposed"] else (w[0] // groups, w[1])
            wide = cog >= GEMM_MIN_CHANNELS and cig * math.prod(w[2:]) >= GEMM_MIN_CHANNELS
            found.append((node, int(cog), int(cig), wide))
        return found

    def narrow_convs(self) -> bool:
        """A convolution whose groups are narrower than one tl.dot tile (channels per group, or in-channels x
        taps) at the full inputs: "auto" runs it with the plane kernel (depthwise) or the direct one."""
        return any(not wide for *_, wide in self.conv_groups())

    def gemm_conv_widths(self) -> list[tuple[int, bool]]:
        """(output channels per group, strided transposed) of each convolution wide enough for the implicit
        GEMM, at the full inputs."""
        found = []
        for node, cog, _, wide in self.conv_groups():
            if wide:
                strided = bool(node.attrs["transposed"]) and any(v > 1 for v in node.attrs["stride"])
                subpixel = strided and all(v == 1 for v in node.attrs["dilation"])
                found.append((cog, subpixel))
        return found

    def gemm_conv_grids(self, block_m: int, block_n: int) -> list[tuple[int, int]]:
        """(output tiles of block_m positions x block_n channels over all groups, in-channels per group) of
        each convolution wide enough for the implicit GEMM, at the full inputs."""
        found = []
        for node, cog, cig, wide in self.conv_groups():
            out = self.full_shapes.get(node.name) or node.shape
            if wide and len(out) >= 3:
                rows = out[0] * math.prod(out[2:])
                found.append((-(-rows // block_m) * -(-cog // block_n) * int(node.attrs["groups"]), cig))
        return found

    def replan(self, options: PlanOptions) -> Analysis:
        """The same analysis with other fusion boundaries."""
        return replace(self, segments=plan(self.graph, options))

    def summary(self) -> str:
        kinds = [s.kind for s in self.segments]
        return f"{len(kinds)} kernel(s): " + ", ".join(kinds)


def signature(source: str, class_name: str) -> tuple[str, list[str], list[str]]:
    """(constructor params text, constructor arg names, forward arg names) from the reference source."""
    tree = ast.parse(source)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    if cls is None:
        raise UnsupportedError(class_name, "class not found in the operator source")
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    fwd = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if fwd is None:
        raise UnsupportedError(class_name, "no forward method")
    for fn in (init, fwd):
        if fn is not None and (fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.posonlyargs):
            raise UnsupportedError(fn.name, "*args, **kwargs and keyword-only parameters are not supported")
    if init is None:
        return "", [], [a.arg for a in fwd.args.args[1:]]
    args = ast.arguments(
        posonlyargs=[],
        args=init.args.args[1:],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=init.args.defaults,
    )
    for a in args.args:
        a.annotation = None
    return ast.unparse(args), [a.arg for a in args.args], [a.arg for a in fwd.args.args[1:]]


def is_super_init(stmt: ast.stmt) -> bool:
    """`super().__init__(...)` or `super(Cls, self).__init__(...)` as a statement."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "__init__"
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
    )


def init_body(source: str, class_name: str) -> tuple[list[str], list[str]] | None:
    """The reference constructor's statements after `super().__init__()` and the operator file's imports they use:
    a generated module that runs them creates its parameters and buffers as the reference does (the same
    initialisers, so a model trained from scratch starts alike). None where the constructor reads anything else
    of the file (a helper class, a constant, a method of its own class), or has none."""
    tree = ast.parse(source)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name), None)
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None) if cls else None
    if init is None:
        return None
    body = [stmt for stmt in init.body if not is_super_init(stmt)]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    imports: dict[str, ast.stmt] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                imports[alias.asname or alias.name.split(".")[0]] = stmt
    bound = {a.arg for a in init.args.args} | {"super"}
    for node in ast.walk(init):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    own = {  # attributes the constructor assigns on self
        t.attr
        for node in ast.walk(init)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        for t in ast.walk(target)
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }
    used: list[ast.stmt] = []
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound:
                if node.id in imports:
                    if imports[node.id] not in used:
                        used.append(imports[node.id])
                elif not hasattr(builtins, node.id):
                    return None  # a name of the operator file's own (a helper, a constant)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Load)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
                and node.attr not in own
                and not hasattr(nn.Module, node.attr)
            ):
                return None  # a method or attribute of the reference's own class (self.apply(self._init_weights))
    used.sort(key=tree.body.index)  # in the file's order
    return [ast.unparse(stmt) for stmt in used], [ast.unparse(stmt) for stmt in body]


def on_meta(fn: Any) -> Any:
    with torch.device("meta"):
        return fn()


# Powers of an input size that operators use as scales: 1 / sqrt(d), sqrt(d), 1 / d.
SIZE_POWERS = (-0.5, 0.5, -1)


class Merger:
    """Resolve per-capture literals to expressions valid for every capture."""

    def __init__(
        self, inits: list[list[Any]], inputs: list[list[Any]], init_names: list[str], fwd_names: list[str]
    ) -> None:
        self.inits = inits
        self.inputs = inputs
        self.init_names = init_names
        self.fwd_names = fwd_names
        self.stored: list[str] = []

    def init_candidates(self) -> list[tuple[str, list[Any]]]:
        found: list[tuple[str, list[Any]]] = []
        for i, name in enumerate(self.init_names):
            values = [init[i] if i < len(init) else None for init in self.inits]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                found.append((name, values))
            elif all(isinstance(v, (list, tuple)) for v in values):
                for j in range(min(len(v) for v in values)):
                    vals = [v[j] for v in values]
                    if all(isinstance(x, (int, float)) for x in vals):
                        found.append((f"{name}[{j}]", vals))
        ints = [(n, v) for n, v in found if all(isinstance(x, int) for x in v)]
        for i, (n1, v1) in enumerate(ints):
            for n2, v2 in ints[i:]:
                found.append((f"{n1} * {n2}", [a * b for a, b in zip(v1, v2, strict=True)]))
                if all(b and a % b == 0 for a, b in zip(v1, v2, strict=True)):
                    found.append((f"{n1} // {n2}", [a // b for a, b in zip(v1, v2, strict=True)]))
        return found

    def from_init(self, values: list[Any], owner: str) -> str | None:
        for name, vals in self.init_candidates():
            if vals == values:
                roots = [part.strip().split("[")[0] for part in name.replace("//", "*").split("*")]
                if owner == "self":
                    self.stored.extend(r for r in roots if r not in self.stored)
                    return " ".join(f"self.{p}" if p[0].isalpha() else p for p in name.split(" "))
                return name
        return None

    def literal(self, values: list[Any], owner: str, allow_inputs: bool = True) -> str:
        if all(v == values[0] for v in values):
            return repr(values[0])
        found = self.from_init(values, owner)
        if found is not None:
            return found
        if allow_inputs and owner == "self":
            for name, shapes in self.input_shapes():
                for d in range(len(shapes[0])):
                    if [s[d] for s in shapes] == list(values):
                        return f"{name}.shape[{d}]"
            for name, shapes in self.input_shapes():
                found = per_element(values, [math.prod(s) for s in shapes])
                if found is not None:  # a mean's backward: the upstream gradient over the element count
                    return found.format(numel=f"{name}.numel()")
            found = self.from_input_sizes(values)
            if found is not None:
                return found
        raise UnsupportedError("size-dependent constant", f"values {values} match no constructor argument")

    def from_input_sizes(self, values: list[Any]) -> str | None:
        """A function of the forward's input sizes: a product of adjacent dims of one input (the b * h that an
        einsum folds into one batch dim), or a power of one dim (the 1 / sqrt(d) of attention,
        `x.shape[-1] ** -0.5`), computed in the forward as the reference computes it."""
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return None
        for name, shapes in self.input_shapes():
            rank = len(shapes[0])
            for start in range(rank):
                for stop in range(start + 2, rank + 1):
                    if [math.prod(s[start:stop]) for s in shapes] == list(values):
                        return " * ".join(f"{name}.shape[{d}]" for d in range(start, stop))
            for d in range(rank):
                for power in SIZE_POWERS:
                    if all(
                        s[d] > 0 and math.isclose(v, s[d] ** power, rel_tol=1e-12)
                        for v, s in zip(values, shapes, strict=True)
                    ):
                        return f"{name}.shape[{d}] ** {power}"
        return None

    def input_shapes(self) -> list[tuple[str, list[tuple[int, ...]]]]:
        out = []
        for i, name in enumerate(self.fwd_names):
            shapes = [tuple(inp[i].shape) for inp in self.inputs if isinstance(inp[i], torch.Tensor)]
            if len(shapes) == len(self.inputs):
                out.append((name, shapes))
        return out


def per_element(values: list[Any], counts: list[int]) -> str | None:
    """`{numel}` or `c / {numel}` where each value is the element count, or one constant c over it (2 / N in the
    backward of a mean squared error); None otherwise."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) or 0 in counts:
        return None
    if list(values) == counts:
        return "{numel}"
    scaled = [v * n for v, n in zip(values, counts, strict=True)]
    c = scaled[0]
    if c != 0 and all(math.isclose(x, c, rel_tol=1e-9) for x in scaled):
        return f"{round(c, 9)!r} / {{numel}}"
    return None


def analyze(loaded: Any, capturer: Callable[..., Graph] = capture) -> Analysis:
    """LoadedOperator → Analysis (raises UnsupportedError). `capturer(model, inputs, names) -> Graph` captures one
    size (capture.capture: the forward; codegen/training.py: one half of a training operator)."""
    spec = loaded.spec
    init_params, init_names, fwd_names = signature(loaded.source, spec.class_name)
    configs: list[tuple[list[Any], list[Any]]] = []
    small_init = loaded.init_inputs(small=True)
    full_init = loaded.init_inputs(small=False)
    configs.append((small_init, on_meta(lambda: loaded.inputs(small=True))))
    configs.append((full_init, on_meta(lambda: loaded.inputs(small=False))))
    declared = on_meta(lambda: loaded.variants(small=True))
    for variant in declared or auto_variants(configs[0][1], loaded, small_init):
        configs.append((small_init, variant))
    for variant in on_meta(lambda: loaded.variants(small=False)):
        configs.append((full_init, variant))
    graphs: list[Graph] = []
    models: list[nn.Module] = []
    for init, inputs in configs:
        model = on_meta(lambda init=init: loaded.model_cls(*init))
        if len(inputs) != len(fwd_names):
            raise UnsupportedError("forward", f"takes {len(fwd_names)} arguments, inputs give {len(inputs)}")
        graphs.append(capturer(model, inputs, fwd_names))
        models.append(model)
    main = graphs[0]
    for other in graphs[1:]:
        same = list(main.nodes) == list(other.nodes) and all(
            main.nodes[n].op == other.nodes[n].op and main.nodes[n].args == other.nodes[n].args for n in main.nodes
        )
        if not same:
            raise UnsupportedError("graph", "the captured graph changes with the input sizes")
    for name, node in main.nodes.items():
        if node.op in ("conv", "pool"):
            fixed = {k: v for k, v in node.attrs.items() if not (k == "groups" and not node.attrs.get("transposed"))}
            for other in graphs[1:]:
                theirs = other.nodes[name].attrs
                changed = [k for k in fixed if theirs.get(k) != fixed[k]]
                if changed:
                    raise UnsupportedError(
                        f"{node.op} {name}", f"its {', '.join(changed)} change with the constructor arguments or sizes"
                    )
    merger = Merger([c[0] for c in configs], [c[1] for c in configs], init_names, fwd_names)
    channel_convs = frozenset(
        name
        for name, node in main.nodes.items()
        if node.op == "conv"
        and int(node.attrs["groups"]) == 1
        and all(g.nodes[name].shape[1] <= CHANNEL_TILE for g in graphs)
    )
    segments = plan(main, PlanOptions(channel_convs=channel_convs))
    kept = library_ops(main)
    if kept and not any(computes(main, seg) for seg in segments):
        raise UnsupportedError(
            kept[0],
            "kept as the library's call (no Triton template for it, or for an unstable sort or a topk whose "
            "indices are used torch's own order of tied values), and under the hybrid policy nothing but library "
            "calls would be left (no Triton region around them)",
        )
    for g in graphs[1:]:
        for name in list(g.nodes):
            if name not in main.nodes:
                del g.nodes[name]
    const_exprs: dict[str, str] = {}
    view_exprs: dict[str, str] = {}
    library_exprs: dict[str, str] = {}
    for name, node in main.nodes.items():
        if node.op == "const":
            values = [g.nodes[name].attrs["value"] for g in graphs]
            expr = merger.literal(values, "self")
            if expr != repr(values[0]) or not all(v == values[0] for v in values):
                const_exprs[name] = expr
        elif node.op == "hostview":
            view_exprs[name] = view_expression(name, graphs, merger)
        elif node.op == "library" and node.attrs["index"] in (None, 0):
            library_exprs[name] = library_expression(name, graphs, merger)
    params: dict[str, tuple[list[str], torch.dtype, bool]] = {}
    buffers = {k for k, _ in models[0].named_buffers()}
    state = [m.state_dict() for m in models]
    for key, tensor in state[0].items():
        shapes = [tuple(s[key].shape) for s in state]
        exprs = [merger.literal([sh[d] for sh in shapes], "init", allow_inputs=False) for d in range(len(shapes[0]))]
        params[key] = (exprs, tensor.dtype, key in buffers)
    out_dtypes = {str(main.nodes[o].dtype) for o in main.outputs}
    return Analysis(
        name=identifier(spec.name),
        class_name=spec.class_name,
        path=repository_path(spec.path),
        dtype=",".join(sorted(out_dtypes)),
        precision=spec.precision,
        graph=main,
        segments=segments,
        init_params=init_params,
        init_source=init_body(loaded.source, spec.class_name),
        init_args=init_names,
        forward_args=fwd_names,
        params=params,
        const_exprs=const_exprs,
        view_exprs=view_exprs,
        library_exprs=library_exprs,
        stored_args=merger.stored,
        full_shapes={name: tuple(node.shape) for name, node in graphs[1].nodes.items()},
        channel_convs=channel_convs,
        capture_shapes={  # nodes the planner added to the main graph (a gather's load) have its shape only
            name: tuple(tuple((g.nodes.get(name) or node).shape) for g in graphs) for name, node in main.nodes.items()
        },
    )


def computes(graph: Graph, seg: Segment) -> bool:
    """Does the segment compute anything (not only copy values, as a cast to the same dtype does)?"""
    return any(
        not (graph.nodes[n].op == "cast" and graph.nodes[n].dtype == graph.nodes[graph.nodes[n].args[0]].dtype)
        for n in seg.nodes
    )


# aten ops whose tensor method or torch function takes other arguments than the aten schema (kept calls write
# these instead): aten.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse) is F.embedding(indices,
# weight) where its padding_idx is -1 and the flags off; aten.index.Tensor(x, [None, i]) is x[:, i]
FUNCTIONS = {
    "var_mean": "torch.var_mean",
    "convolution": "torch.convolution",  # a convolution the templates refuse (fp16, bf16)
    "cat": "torch.cat",
    "stack": "torch.stack",
    "arange": "torch.arange",
    "zeros": "torch.zeros",
    "ones": "torch.ones",
    "full": "torch.full",
    "empty": "torch.empty",
}


def library_expression(name: str, graphs: list[Graph], merger: Merger) -> str:
    """The library call of node `name` as Python: `{0}.cumsum(1)`, `{0}.topk(self.k)`, `torch.var_mean({0}, [1],
    correction=0)`: the tensor method where torch has one (an in-place op on a copy of its operand:
    `{0}.clone().scatter_add_(…)`), else the torch function; its tensor operands as `{i}` and its device as
    `{device}`; numbers that change between the captures as expressions of the constructor's arguments or the
    inputs' sizes (Merger.literal), else the operator is unsupported."""
    nodes = [g.nodes[name] for g in graphs]
    node = nodes[0]
    method, target = node.attrs["method"], node.attrs["target"]

    def text(values: list[Any]) -> str:
        first = values[0]
        if isinstance(first, Ref):
            return f"{{{first.index}}}"
        if first is DEVICE:
            return "{device}"
        if isinstance(first, (list, tuple)):
            if any(not isinstance(v, type(first)) or len(v) != len(first) for v in values):
                raise UnsupportedError(target, "an argument list that changes with the sizes")
            items = [text([v[i] for v in values]) for i in range(len(first))]
            if isinstance(first, tuple):
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            return "[" + ", ".join(items) + "]"
        if isinstance(first, float) and not math.isfinite(first) and all(v == first for v in values):
            return "math.nan" if math.isnan(first) else ("math.inf" if first > 0 else "-math.inf")
        if isinstance(first, (int, float)) and not isinstance(first, bool):
            return merger.literal(values, "self")
        if any(v != first for v in values):
            raise UnsupportedError(target, f"an argument that changes with the sizes: {values}")
        return repr(first).replace("{", "{{").replace("}", "}}")

    args = [text([n.attrs["call"][0][i] for n in nodes]) for i in range(len(node.attrs["call"][0]))]
    # a factory's layout=torch.strided and pin_memory=False are what it does without them (and the static guard
    # lists no layout)
    implied = {"layout": torch.strided, "pin_memory": False}
    kwargs = {
        k: text([n.attrs["call"][1][k] for n in nodes])
        for k, v in node.attrs["call"][1].items()
        if not (k in implied and v in (implied[k], None))
    }
    rest = ", ".join(args[1:] + [f"{k}={v}" for k, v in kwargs.items()])
    call = node.attrs["call"][0]
    first_tensor = bool(call) and isinstance(call[0], Ref)
    if target == "aten.index.Tensor" and first_tensor and isinstance(call[1], (list, tuple)):
        keys = [":" if k is None else text([n.attrs["call"][0][1][i] for n in nodes]) for i, k in enumerate(call[1])]
        return "{0}[" + ", ".join(keys) + ("," if len(keys) == 1 and keys[0] == ":" else "") + "]"
    if (
        target == "aten.embedding.default"
        and len(call) >= 2
        and all(v in (-1, False) for v in (list(call[2:]) + list(node.attrs["call"][1].values())))
    ):
        return f"torch.nn.functional.embedding({args[1]}, {args[0]})"
    if method in FUNCTIONS:
        expression = f"{FUNCTIONS[method]}({', '.join(args + [f'{k}={v}' for k, v in kwargs.items()])})"
        # a convolution's result takes its weight's layout (channels-last on a module converted to it): the kernels
        # after it read it as contiguous
        return expression + ".contiguous()" if method == "convolution" else expression
    if first_tensor and hasattr(torch.Tensor, method):
        inplace = method.endswith("_") and not method.startswith("_")
        return f"{args[0]}{'.clone()' if inplace else ''}.{method}({rest})"
    raise UnsupportedError(target, "no tensor method or allowed torch function calls this op")


def repository_path(path: str) -> str:
    """The operator's path as a reviewer reads it: relative to its git repository (or to the working directory
    where it is not in one), never a machine's absolute path."""
    resolved = Path(path).resolve()
    for parent in resolved.parents:
        if (parent / ".git").exists():
            return resolved.relative_to(parent).as_posix()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.name


def auto_variants(inputs: list[Any], loaded: Any, init: list[Any]) -> list[list[Any]]:
    """The evaluator's automatic shape variants (one row fewer in the batch dim; for stateless operators one
    element fewer in the last dim), so literals that follow those sizes are caught here, not there."""
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    found: list[list[Any]] = []
    if tensors and all(t.dim() >= 1 and t.shape[0] == tensors[0].shape[0] > 1 for t in tensors):
        found.append([x[:-1] if isinstance(x, torch.Tensor) else x for x in inputs])
    model = on_meta(lambda: loaded.model_cls(*init))
    stateless = not list(model.parameters()) and not list(model.buffers())
    if stateless and tensors and all(t.dim() >= 1 and t.shape[-1] == tensors[0].shape[-1] > 1 for t in tensors):
        found.append([x[..., :-1] if isinstance(x, torch.Tensor) else x for x in inputs])
    usable = []
    for variant in found:
        try:
            with torch.no_grad():
                model(*variant)
        except Exception:  # the reference does not take this shape: not a variant
            continue
        usable.append(variant)
    return usable


def identifier(text: str) -> str:
    out = "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_") or "op"
    return out if not out[0].isdigit() else f"op_{out}"


def view_expression(name: str, graphs: list[Graph], merger: Merger) -> str:
    """An expression of `{src}` reproducing the captured view at every size."""
    main = graphs[0].nodes[name]
    kind, params = main.attrs["view"], main.attrs["params"]
    if kind in ("view", "reshape", "_unsafe_view", "expand"):
        targets = [list(g.nodes[name].shape) for g in graphs]
        srcs = [list(g.nodes[g.nodes[name].args[0]].shape) for g in graphs]
        dims: list[str | None] = []
        for d in range(len(targets[0])):
            values = [t[d] for t in targets]
            expr = None
            for i in range(len(srcs[0])):
                if [s[i] for s in srcs] == values and (i == d or len(srcs[0]) - i == len(targets[0]) - d):
                    expr = f"{{src}}.shape[{i}]"
                    break
            if expr is None and all(v == values[0] for v in values) and values[0] == 1:
                expr = "1"
            dims.append(expr)
        unknown = [d for d, e in enumerate(dims) if e is None]
        if len(unknown) == 1 and kind != "expand":
            dims[unknown[0]] = "-1"
        elif unknown:
            for d in unknown:
                dims[d] = merger.literal([t[d] for t in targets], "self")
        method = "expand" if kind == "expand" else "reshape"
        return f"{{src}}.{method}({', '.join(dims)})" if dims else "{src}.reshape(())"
    if kind in ("slice", "select"):
        return index_expression(name, graphs)
    if kind == "split":
        return split_expression(name, graphs)
    if kind == "t":
        return "{src}.t()"
    if kind == "transpose":
        return f"{{src}}.transpose({params[0]}, {params[1]})"
    if kind == "permute":
        return f"{{src}}.permute({', '.join(map(str, params[0]))})"
    if kind == "unsqueeze":
        return f"{{src}}.unsqueeze({params[0]})"
    if kind == "squeeze":
        return (
            f"{{src}}.squeeze({', '.join(map(str, params[0])) if isinstance(params[0], list) else params[0]})"
            if params
            else "{src}.squeeze()"
        )
    if kind == "groups":
        groups = merger.literal([g.nodes[name].attrs["params"][0] for g in graphs], "self")
        return f"{{src}}.reshape({{src}}.shape[0], {groups}, -1)"
    if kind == "like":
        return "{src}.reshape({like}.shape)"
    if kind == "channel":
        return "{src}.reshape(-1" + ", 1" * params[0] + ")"
    if kind == "arange":  # allocated in the forward on {src}'s device (capture.op_arange), bounds following the sizes
        start, end, step = (
            merger.literal([g.nodes[name].attrs["params"][i] for g in graphs], "self") for i in range(3)
        )
        bounds = end if (start, step) == ("0", "1") else ", ".join([start, end] + ([step] if step != "1" else []))
        dtype = "" if main.dtype == torch.int64 else f", dtype=torch.{str(main.dtype).removeprefix('torch.')}"
        return f"torch.arange({bounds}, device={{src}}.device{dtype})"
    if kind == "head":  # an embedding of the positions 0..n-1: the table's first n rows
        return f"{{src}}[:{merger.literal([g.nodes[name].attrs['params'][0] for g in graphs], 'self')}]"
    if kind == "positions":  # the index along dim d, as a column of the dims after it (training.py's one-hot)
        d, trailing = params
        index = f"torch.arange({{src}}.shape[{d}], device={{src}}.device)"
        return index + (f".reshape(-1{', 1' * trailing})" if trailing else "")
    raise UnsupportedError(f"aten.{kind}", "view not supported")


def index_expression(name: str, graphs: list[Graph]) -> str:
    """`{src}[:, :, :-3]` or `{src}[:, 0]`: a captured slice or select as Python indexing, each bound a number
    or a distance from the end of the dim where that is what stays fixed across the captures."""
    nodes = [g.nodes[name] for g in graphs]
    sizes_of = [g.nodes[n.args[0]].shape for g, n in zip(graphs, nodes, strict=True)]
    kind = nodes[0].attrs["view"]
    dims = {
        int(n.attrs["params"][0]) % len(s) if n.attrs["params"] else 0 for n, s in zip(nodes, sizes_of, strict=True)
    }
    if len(dims) != 1:
        raise UnsupportedError(f"aten.{kind}", "its dim changes with the sizes")
    dim = dims.pop()
    sizes = [s[dim] for s in sizes_of]

    def at(i: int, default: Any) -> list[int]:
        """Parameter i of every capture, clamped into the dim as Python indexing does."""
        found = []
        for n, size in zip(nodes, sizes, strict=True):
            params = list(n.attrs["params"])
            value = params[i] if len(params) > i and params[i] is not None else default(size)
            value = int(value) + size if int(value) < 0 else int(value)
            found.append(min(max(value, 0), size))
        return found

    def bound(values: list[int]) -> str:
        if all(v == values[0] for v in values):
            return str(values[0])
        from_end = {v - s for v, s in zip(values, sizes, strict=True)}
        if len(from_end) == 1:
            return str(from_end.pop())
        raise UnsupportedError(f"aten.{kind}", f"bounds {values} follow neither a number nor the end of the dim")

    if kind == "select":
        index = bound(at(1, lambda size: 0))
    else:
        starts, ends = at(1, lambda size: 0), at(2, lambda size: size)
        steps = {n.attrs["params"][3] if len(n.attrs["params"]) > 3 else 1 for n in nodes}
        if len(steps) != 1:
            raise UnsupportedError("aten.slice", "its step changes with the sizes")
        step = steps.pop()
        start = "" if all(v == 0 for v in starts) else bound(starts)
        end = "" if ends == sizes else bound(ends)
        index = f"{start}:{end}" + (f":{step}" if step != 1 else "")
    return "{src}[" + ", ".join([":"] * dim + [index]) + "]"


def split_expression(name: str, graphs: list[Graph]) -> str:
    """`{src}.chunk(2, 2)[0]` (pieces that follow the size) or `{src}.split(16, 1)[3]` (pieces of a fixed size)."""
    dim, index, count, _ = graphs[0].nodes[name].attrs["params"]
    split_sizes = [g.nodes[name].attrs["params"][3] for g in graphs]
    if all(k == split_sizes[0] for k in split_sizes):
        return f"{{src}}.split({split_sizes[0]}, {dim})[{index}]"
    sizes = [g.nodes[g.nodes[name].args[0]].shape[dim] for g in graphs]
    if all(k == -(-size // count) for k, size in zip(split_sizes, sizes, strict=True)):
        return f"{{src}}.chunk({count}, {dim})[{index}]"
    raise UnsupportedError("aten.split", f"piece sizes {split_sizes} follow neither a number nor the dim's size")
