"""Training operators: capture the joint forward and backward at aten level, cut it into a forward graph and a
backward graph, and analyse both with the forward's machinery (analyze.py: every declared size, constants merged).

Capture: make_fx traces a function that runs the operator and then torch.autograd.grad of its floating outputs with
respect to its floating inputs and its parameters (upstream gradients are extra inputs, one per floating output).
Autograd's backward ops (native_layer_norm_backward, gelu_backward, …) are decomposed into primitives by torch's own
decompositions, so the same lowering (capture.Lowerer) and emitters (plan.py, kernels.py, …) serve the backward.

Partition (the gene ``train.save``): the backward reads the inputs, the parameters, the upstream gradients and, with
``forward``, the forward's outputs and its per-row statistics (values smaller than the tensors they summarise: a
norm's mean and rstd, a softmax's max and sum); every other forward value it needs it recomputes in its own kernels.
With ``inputs`` it saves nothing the forward computed and recomputes all of it.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch import fx, nn
from torch.func import functional_call
from torch.fx.experimental.proxy_tensor import make_fx

from foundry.codegen.analyze import Analysis, analyze
from foundry.codegen.capture import Lowerer
from foundry.codegen.ir import Graph, Node, UnsupportedError, usable_name
from foundry.codegen.plan import PlanOptions, Segment

SAVE_MODES = ("inputs", "forward")

aten = torch.ops.aten
# autograd's backward ops, decomposed into the primitives the lowering knows (torch._decomp's own decompositions)
BACKWARD_OPS = (
    "native_layer_norm_backward",
    "native_group_norm_backward",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "threshold_backward",
    "leaky_relu_backward",
    "elu_backward",
    "softplus_backward",
    "hardsigmoid_backward",
    "hardswish_backward",
    "mish_backward",
    "hardtanh_backward",
    "mse_loss_backward",
    "smooth_l1_loss_backward",
    "huber_loss_backward",
    "binary_cross_entropy_with_logits_backward",
    "nll_loss_backward",
)


def backward_decompositions() -> dict[Any, Any]:
    from torch._decomp import get_decompositions

    ops = [getattr(aten, name) for name in BACKWARD_OPS if hasattr(aten, name)]
    return get_decompositions(ops)


@dataclass(frozen=True)
class Target:
    """A gradient the backward returns: of a forward argument (`index` into its arguments) or of a parameter."""

    label: str  # the forward argument's name, or the parameter's state key
    leaf: str  # its node in the forward graph (the argument or the parameter)
    grad: str | None  # the backward graph's value for it; None where no output depends on it


@dataclass
class Split:
    """One capture cut in two: the forward graph (its outputs, then the values it saves) and the backward graph
    (inputs: the forward's arguments, the upstream gradients, the saved values; outputs: the gradients)."""

    forward: Graph
    backward: Graph
    outputs: int  # the operator's outputs (the first of the forward graph's outputs)
    tangents: list[str]  # the upstream gradients' names, one per floating output
    saved: list[str]  # forward values the backward reads (the forward graph's outputs after the operator's)
    targets: list[Target] = field(default_factory=list)


def tensors_out(out: Any) -> list[torch.Tensor]:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    if not all(isinstance(o, torch.Tensor) for o in outs):
        raise UnsupportedError("output", "outputs must be tensors")
    return outs


def joint_module(model: nn.Module, inputs: Sequence[Any]) -> tuple[fx.GraphModule, list[str], list[bool]]:
    """The joint graph: placeholders are the parameters and buffers, the inputs, then one upstream gradient per
    floating output; outputs are the operator's, then the gradients that are not None. Returns it with the state
    keys and, per gradient target (floating inputs, then parameters), whether it has a gradient."""
    params = dict(model.named_parameters())
    state = {**params, **dict(model.named_buffers())}
    with torch.no_grad():
        outs = tensors_out(model(*inputs))
    tangents = [torch.empty_like(o) for o in outs if o.is_floating_point()]
    floating = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.is_floating_point()]
    found: list[bool] = []

    def joint(values: dict[str, torch.Tensor], *args: Any) -> Any:
        given, upstream = list(args[: len(inputs)]), list(args[len(inputs) :])
        leaves = [x.detach().requires_grad_(True) if i in floating else x for i, x in enumerate(given)]
        state = {k: (v.detach().requires_grad_(True) if k in params else v) for k, v in values.items()}
        with torch.enable_grad():
            result = tensors_out(functional_call(model, state, tuple(leaves)))
            carried = [o for o in result if o.is_floating_point()]
            wrt = [leaves[i] for i in floating] + [state[k] for k in params]
            grads = torch.autograd.grad(carried, wrt, upstream, allow_unused=True)
        found[:] = [g is not None for g in grads]
        return (*result, *[g for g in grads if g is not None])

    with torch.no_grad():
        gm = make_fx(joint, tracing_mode="fake", decomposition_table=backward_decompositions())(
            state, *inputs, *tangents
        )
    keys = [k for k, _ in model.named_parameters()] + [k for k, _ in model.named_buffers()]
    return gm, keys, list(found)


class ConvBackward:
    """convolution_backward as convolutions and reductions the emitters have (a mixin of TrainingLowerer): for a
    convolution with stride 1, dilation 1 and one group, the input's gradient is the transposed convolution of the
    upstream gradient with the weight (same padding); the weight's is the convolution of the input with the upstream
    gradient, batch taken as channels (x and dy transposed (0, 1), the result transposed back); the bias's is the
    upstream gradient summed over the spatial dims, then the batch."""

    def op_convolution_backward(
        self: Any,
        node: fx.Node,
        grad: Any,
        x: Any,
        w: Any,
        bias_sizes: Any,
        stride: Any,
        padding: Any,
        dilation: Any,
        transposed: bool,
        output_padding: Any,
        groups: int,
        output_mask: Any,
    ) -> tuple[Any, Any, Any]:
        gv, xv, wv = self.val(grad), self.val(x), self.val(w)
        d = len(self.shape(xv)) - 2
        if transposed or groups != 1 or any(v != 1 for v in stride) or any(v != 1 for v in dilation):
            raise UnsupportedError(
                "aten.convolution_backward",
                "only a convolution with stride 1, dilation 1 and one group has a backward template",
            )
        pad = [int(v) for v in padding] * (d if len(padding) == 1 else 1)
        attrs = dict(stride=[1] * d, dilation=[1] * d, output_padding=[0] * d, groups=1)
        results: list[Any] = [None, None, None]
        if output_mask[0]:
            results[0] = self.add(
                "conv", (gv, wv), self.shape(xv), torch.float32, base="conv_grad", padding=pad, transposed=True, **attrs
            )
        if output_mask[1]:

            def swapped(v: str) -> str:
                shape = self.shape(v)
                return self.add(
                    "hostview", (v,), (shape[1], shape[0], *shape[2:]), self.nodes[v].dtype,
                    base=f"{v}_t", view="transpose", params=[0, 1],
                )  # fmt: skip

            ws = self.shape(wv)
            per_in = self.add(
                "conv", (swapped(xv), swapped(gv)), (ws[1], ws[0], *ws[2:]), torch.float32, base="conv_wgrad",
                padding=pad, transposed=False, **attrs,
            )  # fmt: skip
            results[1] = self.add(
                "hostview", (per_in,), ws, torch.float32, base="wgrad", view="transpose", params=[0, 1]
            )
        if output_mask[2]:
            spatial = self.reduce("sum", gv, tuple(range(2, d + 2)), False, name="grad_spatial")
            results[2] = self.reduce("sum", spatial, (0,), False, name="grad_channels")
        return tuple(results)  # type: ignore[return-value]


class TrainingLowerer(ConvBackward, Lowerer):
    """The lowering, plus what backward decompositions write that forwards do not: a one-hot of targets
    (nll_loss_backward: scatter of a value into zeros at each row's target) as where(position == target, value, 0),
    the positions an arange the launcher allocates (a host view, `positions`)."""

    def same_shape_input(self, name: str) -> str:
        """An input `name` is computed from with its shape (the logits of a log-softmax), else `name` itself."""
        todo, seen = [name], set()
        while todo:
            current = todo.pop(0)
            if current in seen:
                continue
            seen.add(current)
            node = self.nodes[current]
            if node.op == "input" and node.shape == self.shape(name):
                return current
            todo.extend(node.args)
        return name

    def op_zeros_like(self, node: fx.Node, x: Any, **kwargs: Any) -> str:
        return self.const(0.0)

    def op_scatter(self, node: fx.Node, base: Any, dim: int, index: Any, value: Any = None, **kwargs: Any) -> str:
        meta = node.meta["val"]
        rank = len(meta.shape)
        d = dim % rank
        zeros = isinstance(base, fx.Node) and getattr(base.target, "overloadpacket", None) is aten.zeros_like
        if not zeros or isinstance(value, fx.Node) or value is None:
            raise UnsupportedError("aten.scatter", "only a value scattered into zeros (a one-hot) has a template")
        like = self.val(base.args[0])
        source = self.same_shape_input(like)  # the logits: a tensor in memory, so nothing is written to size them
        positions = self.add(
            "hostview", (source,), (meta.shape[d],) + (1,) * (rank - 1 - d), torch.int64,
            base="positions", view="positions", params=[d, rank - 1 - d],
        )  # fmt: skip
        hit = self.pw("eq", positions, self.val(index), dtype=torch.bool, name="is_target")
        return self.pw("where", hit, self.const(float(value)), self.const(0.0), name="one_hot")


def rename(graph: Graph, old: str, new: str) -> None:
    """Call node `old` `new` everywhere in `graph` (node order kept)."""
    renamed = {(new if name == old else name): node for name, node in graph.nodes.items()}
    graph.nodes.clear()
    graph.nodes.update(renamed)
    graph.nodes[new].name = new
    for node in graph.nodes.values():
        node.args = tuple(new if a == old else a for a in node.args)
        if node.attrs.get("of") == old:
            node.attrs["of"] = new
        if node.op == "hostview" and old in (node.attrs.get("params") or []):
            node.attrs["params"] = [new if p == old else p for p in node.attrs["params"]]
    graph.inputs = [new if n == old else n for n in graph.inputs]
    graph.outputs = [new if n == old else n for n in graph.outputs]
    if old in graph.params:
        graph.params[new] = graph.params.pop(old)
    if old in graph.origin:
        graph.origin[new] = graph.origin.pop(old)


def ancestors(graph: Graph, roots: Sequence[str], stop: set[str]) -> set[str]:
    """`roots` and every value they are computed from, not looking past `stop`."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in stop:
            todo.extend(graph.nodes[name].args)
            of = graph.nodes[name].attrs.get("of")
            if graph.nodes[name].op == "size" and of:
                todo.append(of)
            if graph.nodes[name].op == "hostview" and graph.nodes[name].attrs.get("view") == "like":
                todo.extend(graph.nodes[name].attrs["params"])
    return seen


def subgraph(graph: Graph, keep: set[str], outputs: list[str], leaves: dict[str, int]) -> Graph:
    """The nodes of `graph` in `keep` (copied), `leaves` turned into inputs at those argument indexes."""
    nodes: dict[str, Node] = {}
    for name, node in graph.nodes.items():
        if name not in keep:
            continue
        if name in leaves:
            nodes[name] = Node(name, "input", (), node.shape, node.dtype, {"index": leaves[name]})
        else:
            nodes[name] = copy.deepcopy(node)
    inputs = [n for n, node in nodes.items() if node.op == "input"]
    params = {n: k for n, k in graph.params.items() if n in nodes}
    origin = {n: o for n, o in graph.origin.items() if n in nodes and n not in leaves}
    return Graph(nodes=nodes, inputs=inputs, outputs=list(outputs), params=params, origin=origin)


def mode_dependent(model: nn.Module, inputs: Sequence[Any], eval_graph: fx.GraphModule) -> list[str]:
    """The aten ops the joint graph runs in train mode and not in eval mode (native_dropout, a batch norm's
    training form), in the order of the train-mode graph; [] where the two modes run the same ops."""

    def ops(gm: fx.GraphModule) -> list[str]:
        return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]

    seen = set(ops(eval_graph))
    try:
        trained = joint_module(model.train(), inputs)[0]
    finally:
        model.eval()
    found = list(dict.fromkeys(op for op in ops(trained) if op not in seen))
    telling = [op for op in found if any(word in op for word in ("dropout", "bernoulli", "rand", "batch_norm"))]
    return telling + [op for op in found if op not in telling]


def split(model: nn.Module, inputs: Sequence[Any], names: Sequence[str], save: str) -> Split:
    """Capture `model(*inputs)` with its backward and cut it (see the module docstring)."""
    if save not in SAVE_MODES:
        raise ValueError(f"train.save must be one of {SAVE_MODES}, got {save!r}")
    model = model.eval()
    gm, keys, found = joint_module(model, inputs)
    moded = mode_dependent(model, inputs, gm)
    if moded:
        raise UnsupportedError(
            moded[0],
            "the module computes otherwise in train mode (dropout, batch statistics): the template writer lowers the "
            "eval-mode graph only, and a training kernel must be right in train mode",
        )
    n_out = len(next(n for n in gm.graph.nodes if n.op == "output").args[0]) - sum(found)
    floating = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.is_floating_point()]
    n_tangents = len([n for n in gm.graph.nodes if n.op == "placeholder"]) - len(keys) - len(inputs)
    lowerer = TrainingLowerer(gm, keys, len(inputs) + n_tangents, [*names, *(["tangent"] * n_tangents)])
    graph = lowerer.lower()
    state = set(model.state_dict().keys())
    for key in graph.params.values():
        if key not in state:
            raise UnsupportedError(key, "a non-persistent buffer: its value is not in the state_dict")
    outs, grads = graph.outputs[:n_out], graph.outputs[n_out:]
    # names a reviewer reads: y for a single computed output, grad_y for its upstream gradient, grad_x per target
    if n_out == 1 and graph.nodes[outs[0]].op not in ("input", "param", "hostview") and "y" not in graph.nodes:
        rename(graph, outs[0], "y")
        outs = graph.outputs[:n_out]
        grads = graph.outputs[n_out:]
    tangents = [n for n in graph.inputs if graph.nodes[n].attrs["index"] >= len(inputs)]
    carried = [o for o in outs if graph.nodes[o].dtype.is_floating_point]
    for t, o in zip(tangents, carried, strict=True):
        want = f"grad_{o}"
        if usable_name(want) and want not in graph.nodes:
            rename(graph, t, want)
    tangents = [n for n in graph.inputs if graph.nodes[n].attrs["index"] >= len(inputs)]
    leaves_of = {graph.nodes[n].attrs["index"]: n for n in graph.inputs}
    param_leaf = {key: n for n, key in graph.params.items()}
    labels = [(names[i], leaves_of.get(i, "")) for i in floating]
    labels += [(key, param_leaf.get(key, "")) for key, _ in model.named_parameters()]
    targets: list[Target] = []
    it = iter(grads)
    for (label, leaf), has in zip(labels, found, strict=True):
        grad = next(it) if has else None
        targets.append(Target(label, leaf, grad))
    for t in targets:
        node = graph.nodes.get(t.grad or "")
        want = f"grad_{t.leaf or t.label.replace('.', '_')}"
        if (
            node is not None
            and node.op not in ("input", "param", "const", "size")
            and not passthrough(graph, t.grad or "")
            and usable_name(want)
            and want not in graph.nodes
            and sum(u.grad == t.grad for u in targets) == 1
        ):
            rename(graph, t.grad or "", want)
    grads = graph.outputs[n_out:]
    it = iter(grads)
    targets = [replace(t, grad=next(it) if t.grad is not None else None) for t in targets]
    # what depends on the upstream gradients is the backward; the rest is the forward
    tainted: set[str] = set(tangents)
    for name, node in graph.nodes.items():
        if any(a in tainted for a in node.args):
            tainted.add(name)
    grad_roots = list(grads)
    saved = saved_values(graph, grad_roots, tainted, set(outs)) if save == "forward" else []
    fwd_keep = ancestors(graph, outs + saved, set())
    forward = subgraph(graph, fwd_keep, outs + saved, {})
    leaves = {name: len(names) + len(tangents) + k for k, name in enumerate(saved)}
    bwd_keep = ancestors(graph, grad_roots, set(saved))
    # gradients the upstream gradient gives as it is (or through a view) are returned as they are, not computed
    computed = [g for g in dict.fromkeys(grad_roots) if not passthrough(graph, g)]
    backward = subgraph(graph, bwd_keep, computed, leaves)
    backward.inputs = sorted(backward.inputs, key=lambda n: backward.nodes[n].attrs["index"])
    return Split(forward, backward, n_out, tangents, saved, targets)


def passthrough(graph: Graph, name: str) -> bool:
    """Is `name` an input, a parameter or a host view of one (no kernel computes it)?"""
    while graph.nodes[name].op == "hostview":
        name = graph.nodes[name].args[0]
    return graph.nodes[name].op in ("input", "param")


LEAF_OPS = frozenset({"input", "param", "const", "size", "hostview", "gparam"})


def reduced(graph: Graph, name: str) -> bool:
    """Is a reduction among the values `name` is computed from (a statistic, not an elementwise function of inputs)?"""
    return any(graph.nodes[n].kind in ("reduce", "gather", "matmul", "conv") for n in ancestors(graph, [name], set()))


def saved_values(graph: Graph, grads: list[str], tainted: set[str], outputs: set[str]) -> list[str]:
    """The forward values the backward reads, cut where saving is cheap: the operator's outputs and statistics
    (values smaller than the largest input that a reduction went into: a norm's mean and rstd). Any other value the
    backward reads is recomputed from its arguments, and the cut goes on through them."""
    biggest = max((graph.nodes[n].numel for n in graph.inputs if n not in tainted), default=1)
    chosen: set[str] = set()
    seen: set[str] = set()
    todo = [a for n in ancestors(graph, grads, set()) if n in tainted for a in graph.nodes[n].args if a not in tainted]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        node = graph.nodes[name]
        if node.op in LEAF_OPS and node.op != "hostview":
            continue
        if node.op != "hostview" and (name in outputs or (node.numel < biggest and reduced(graph, name))):
            chosen.add(name)
            continue
        todo.extend(node.args)
    return [n for n in graph.nodes if n in chosen]


class Capturer:
    """analyze()'s capture step for one half of a training operator; keeps each capture's Split."""

    def __init__(self, half: str, save: str) -> None:
        self.half = half
        self.save = save
        self.splits: list[Split] = []

    def __call__(self, model: nn.Module, inputs: Sequence[Any], names: Sequence[str] = ()) -> Graph:
        part = split(model, inputs, names, self.save)
        self.splits.append(part)
        return part.forward if self.half == "forward" else part.backward


@dataclass
class Half:
    """One save mode's forward and backward analyses."""

    forward: Analysis
    backward: Analysis
    split: Split  # the CPU-size capture's cut (names, targets, saved values)


@dataclass
class TrainingAnalysis:
    """What the template writer renders a training operator from: per save mode, the forward and the backward."""

    modes: dict[str, Half]
    precision: str = "fp32"

    @property
    def main(self) -> Half:
        """The first save mode that could be analysed (inputs, where it can)."""
        return next(iter(self.modes.values()))

    @property
    def segments(self) -> list[Segment]:
        return [s for h in self.modes.values() for s in (*h.forward.segments, *h.backward.segments)]

    def replan(self, options: PlanOptions) -> TrainingAnalysis:
        return TrainingAnalysis(
            {k: Half(h.forward.replan(options), h.backward.replan(options), h.split) for k, h in self.modes.items()},
            self.precision,
        )

    def row_extents(self) -> list[tuple[int, int]]:
        return self.main.forward.row_extents() + self.main.backward.row_extents()

    def col_extents(self) -> list[tuple[int, int, int]]:
        return self.main.forward.col_extents() + self.main.backward.col_extents()

    def conv_groups(self) -> list[Any]:
        return self.main.forward.conv_groups() + self.main.backward.conv_groups()

    def narrow_convs(self) -> bool:
        return any(not wide for *_, wide in self.conv_groups())

    def gemm_conv_widths(self) -> list[tuple[int, bool]]:
        return self.main.forward.gemm_conv_widths() + self.main.backward.gemm_conv_widths()

    def gemm_conv_grids(self, block_m: int, block_n: int) -> list[tuple[int, int]]:
        return self.main.forward.gemm_conv_grids(block_m, block_n) + self.main.backward.gemm_conv_grids(
            block_m, block_n
        )

    @property
    def channel_convs(self) -> frozenset[str]:
        return self.main.forward.channel_convs


def named_constants(analysis: Analysis) -> Analysis:
    """Constants that follow a constructor argument (a layer norm's width in its backward: `self.hidden`) take its
    name, so that the launch reads `hidden=self.hidden`, not `const=self.hidden`."""
    graph = analysis.graph
    for name, expr in list(analysis.const_exprs.items()):
        match = re.fullmatch(r"self\.(\w+)", expr)
        want = match.group(1) if match else ""
        if not want or want == name or want in graph.nodes or not usable_name(want):
            continue
        rename(graph, name, want)
        analysis.const_exprs[want] = analysis.const_exprs.pop(name)
        for table in (analysis.full_shapes, analysis.capture_shapes):
            if name in table:
                table[want] = table.pop(name)  # type: ignore[index]
    return analysis


def analyze_training(loaded: Any) -> TrainingAnalysis:
    """LoadedOperator → TrainingAnalysis (raises UnsupportedError)."""
    modes: dict[str, Half] = {}
    refused: UnsupportedError | None = None
    for save in SAVE_MODES:
        try:
            fwd = Capturer("forward", save)
            bwd = Capturer("backward", save)
            forward = analyze(loaded, capturer=fwd)
            backward = analyze(loaded, capturer=bwd)
        except UnsupportedError as exc:
            refused = refused or exc
            continue
        part = bwd.splits[0]
        backward = replace(
            backward,
            name=f"{backward.name}_bwd",
            forward_args=[*forward.forward_args, *part.tangents, *part.saved],
        )
        modes[save] = Half(named_constants(forward), named_constants(backward), part)
    if not modes:
        assert refused is not None
        raise refused
    return TrainingAnalysis(modes)


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)
