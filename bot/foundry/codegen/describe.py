"""What a generated kernel says about itself: the formula it computes (from the IR, in its variable names), the
aten ops it fuses, and what its launcher assumes. Text only; the emitters never read it."""

from __future__ import annotations

import re

from foundry.codegen.ir import SORTS, Graph, Node
from foundry.codegen.plan import Segment

# Values shown inside the formula of their one user rather than on a line of their own (x_sum in
# mean = sum(x) / count): helpers of a decomposition, named for the kernel's variables.
INLINED = frozenset(
    {"x_sum", "total", "sq", "sq_sum", "var_eps", "scaled", "numer", "sum_exp", "log_sum", "kept", "nll", "sq_err"}
)
BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "gt": ">", "le": "<=", "ge": ">=", "eq": "==",
          "ne": "!=", "logical_and": "and", "logical_or": "or"}  # fmt: skip
REDUCTION = {"sum": "sum", "max": "max", "min": "min", "argmax": "argmax", "argmin": "argmin"}
KIND_WORDS = {
    "pointwise": "elementwise",
    "row": "a reduction over the trailing dims (one program per block of rows)",
    "col": "a reduction over middle dims (programs own strips of the inner dims)",
    "full": "a reduction over every element (per-program partials, then one combine)",
    "matmul": "a matmul (tiled tl.dot) with its epilogue",
    "conv": "a convolution (implicit GEMM or direct loop) with its epilogue",
    "pool": "pooling windows, one output per lane",
    "scan": "a running sum / product along one dim (one program per block of rows, tiles with a carry)",
    "gather": "values taken by an index tensor, one output element per lane",
    "scatter": "values added at an index tensor's positions with atomic adds, one source element per lane",
    "sort": "a sort or selection along one dim with its indices (one program per block of rows)",
}


def base_name(name: str) -> str:
    return re.sub(r"_\d+$", "", name)


def literal(value: object) -> str:
    return repr(value)


class Formula:
    """The math of a segment as `name = expression` lines over its operands."""

    def __init__(self, graph: Graph, seg: Segment, scalars: set[str]) -> None:
        self.graph = graph
        self.nodes = graph.nodes
        self.seg = seg
        self.members = set(seg.nodes)
        self.scalars = scalars
        users: dict[str, int] = {}
        for node in graph.nodes.values():
            for a in node.args:
                users[a] = users.get(a, 0) + 1
        self.users = users

    def inlined(self, name: str) -> bool:
        node = self.nodes[name]
        if name not in self.members or name in self.seg.outputs:
            return False
        if node.op in ("const", "cast") or node.op == "size":
            return True
        return self.users.get(name, 0) == 1 and (base_name(name) in INLINED or node.op in ("gparam",))

    def expr(self, name: str, paren: bool = True, root: bool = False) -> str:
        """`name`'s value: its name, or (the root, or an inlined value) its expression; a binary expression in
        parentheses where `paren`."""
        node = self.nodes[name]
        if node.op == "const":
            return name if node.attrs.get("named") or name in self.scalars else literal(node.attrs["value"])
        if not root and (name not in self.members or not self.inlined(name)):
            return name
        return self.render(node, paren)

    def render(self, node: Node, paren: bool) -> str:
        op, at = node.op, node.attrs
        if op in BINARY:
            a, b = (self.expr(x) for x in node.args)
            out = f"{a} {BINARY[op]} {b}"
            return f"({out})" if paren else out
        args = [self.expr(a, paren=False) for a in node.args]  # a call's arguments need no parentheses
        if op in REDUCTION:
            return f"{REDUCTION[op]}({args[0]})"
        if op == "cast":
            return args[0]
        if op == "neg":
            return f"-{args[0]}"
        if op == "gparam":
            return f"{args[0]}[channel]"
        if op == "gather":
            return f"{args[0]}[{args[1]}]"
        if op == "scatter":
            return f"scatter_add({args[2]}, {at['dim']}, {args[0]}, {args[1]})"
        if op == "take" and at["form"] == "along":
            return f"gather({args[0]}, {at['dim']}, {args[1]})"
        if op == "take":
            return f"{args[0]}[{', '.join([':'] * at['dim'] + [args[1]])}]"
        if op in SORTS:
            order = {"sort": "descending", "topk": "largest"}.get(op)
            shown = [*args, f"dim={at['dim']}"] + ([f"{order}={at['descending']}"] if order else [])
            return f"{op}({', '.join(shown)}).values"
        if op == "sort_index":
            return f"{self.nodes[node.args[0]].op}(...).indices"
        if op == "matmul":
            out = f"{args[0]} @ {args[1]}"
            return f"({out})" if paren else out
        if op == "conv":
            return f"conv{'_transpose' if at.get('transposed') else ''}({args[0]}, {args[1]})"
        if op == "pool":
            return f"{at['mode']}_pool({args[0]}, kernel={at['kernel']}, stride={at['stride']})"
        extra = [f"{k}={literal(v)}" for k, v in at.items() if k in ("lo", "hi", "slope", "exponent", "alpha", "beta")]
        return f"{op}({', '.join(args + extra)})"

    def lines(self, limit: int = 16) -> list[str]:
        shown = [n for n in self.seg.nodes if not self.inlined(n)]
        out = [f"{n} = {self.expr(n, paren=False, root=True)}" for n in shown]
        if len(out) > limit:
            out = out[: limit - 1] + [f"... ({len(out) - limit + 1} more steps, as in the kernel body)"]
        return out

    def reduced(self) -> str:
        """sum(...) / max(...) run over what, in words."""
        if self.seg.kind == "row":
            return "sum, max, … reduce each row (the trailing dims) and broadcast back over it"
        if self.seg.kind == "col":
            return "sum, max, … reduce the middle dims"
        if self.seg.kind == "full":
            return "sum, … reduce every element"
        if self.seg.kind == "conv" and any(self.nodes[n].op in REDUCTION for n in self.seg.nodes):
            return "sum, … reduce the channels of each position"
        return ""


def title(ops: list[str]) -> str:
    """What a kernel computes, in words, from the aten ops it fuses: "Layer norm", "Convolution + relu + mul"."""
    words = []
    for op in ops:
        word = op.removeprefix("aten.").lstrip("_").removeprefix("native_").replace("_", " ")
        if word not in words:
            words.append(word)
    if len(words) > 4:
        words = words[:3] + ["…"]
    text = " + ".join(words) or "forward"
    return text[0].upper() + text[1:]


def aten_ops(graph: Graph, seg: Segment) -> list[str]:
    """The aten ops whose work this segment does, in graph order."""
    found: list[str] = []
    for n in seg.nodes:
        op = graph.origin.get(n)
        if op and op not in found:
            found.append(op)
    return found
