"""Triton expressions for the IR's pointwise ops. Values are fp32 (or int/bool for masks) tensors."""

from __future__ import annotations

import torch

from foundry.codegen.ir import Node, UnsupportedError

TL_DTYPES = {
    torch.float32: "tl.float32",
    torch.float16: "tl.float16",
    torch.bfloat16: "tl.bfloat16",
    torch.float64: "tl.float64",
    torch.int64: "tl.int64",
    torch.int32: "tl.int32",
    torch.int16: "tl.int16",
    torch.int8: "tl.int8",
    torch.uint8: "tl.uint8",
    torch.bool: "tl.int1",
}

BINARY = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "lt": "<",
    "gt": ">",
    "le": "<=",
    "ge": ">=",
    "eq": "==",
    "ne": "!=",
    "logical_and": "&",
    "logical_or": "|",
}
UNARY_FN = {
    "exp": "tl.exp",
    "log": "tl.log",
    "sqrt": "tl.sqrt",
    "rsqrt": "tl.rsqrt",
    "abs": "tl.abs",
    "sigmoid": "tl.sigmoid",
    "erf": "tl.erf",
    "sin": "tl.sin",
    "cos": "tl.cos",
    "floor": "tl.floor",
    "ceil": "tl.ceil",
}


def literal(value: float | int) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return f"{value}"
    if value != value:
        return "float('nan')"
    if value in (float("inf"), float("-inf")):
        return "float('inf')" if value > 0 else "-float('inf')"
    return repr(float(value))


# Device helpers the expressions call where the plain formula loses the small values the reference keeps
# (exp(x) - 1 is 0 for |x| < 6e-8, where expm1 is x): each keeps full relative precision near 0, and the
# plain formula where it has no cancellation. Rendered once per module, before the kernels (jit_helpers).
JIT_HELPERS = {
    "_expm1": '''@triton.jit
def _expm1(x):
    """exp(x) - 1, relative precision kept near 0: (u - 1) * x / log(u) with u = exp(x) (Kahan)."""
    u = tl.exp(x)
    small = tl.where(u == 1.0, x, (u - 1.0) * (x / tl.log(u)))
    return tl.where(tl.abs(x) < 0.5, small, u - 1.0)''',
    "_log1p": '''@triton.jit
def _log1p(x):
    """log(1 + x), relative precision kept near 0: log(u) * x / (u - 1) with u = 1 + x (Goldberg)."""
    u = 1.0 + x
    small = tl.where(u == 1.0, x, tl.log(u) * (x / (u - 1.0)))
    return tl.where(tl.abs(x) < 0.5, small, tl.log(u))''',
    "_tanh": '''@triton.jit
def _tanh(x):
    """tanh(x): expm1(2x) / (expm1(2x) + 2) near 0, 2 * sigmoid(2x) - 1 elsewhere (no cancellation there)."""
    e = _expm1(2.0 * x)
    return tl.where(tl.abs(x) < 0.5, e / (e + 2.0), 2.0 * tl.sigmoid(2.0 * x) - 1.0)''',
}
JIT_HELPER_NEEDS = {"_tanh": ("_expm1",)}


def jit_helpers(kernels: list[str]) -> list[str]:
    """The device helpers these kernels call (and those they call), each once, in a fixed order."""
    text = "\n".join(kernels)
    wanted = {name for name in JIT_HELPERS if f"{name}(" in text}
    wanted |= {need for name in list(wanted) for need in JIT_HELPER_NEEDS.get(name, ())}
    return [source for name, source in JIT_HELPERS.items() if name in wanted]


def tanh(x: str) -> str:
    return f"_tanh({x})"


def softplus(x: str, beta: float = 1.0, threshold: float = 20.0) -> str:
    scaled = x if beta == 1.0 else f"({x} * {literal(beta)})"
    soft = f"_log1p(tl.exp({scaled}))" if beta == 1.0 else f"(_log1p(tl.exp({scaled})) / {literal(beta)})"
    return f"tl.where({scaled} > {literal(threshold)}, {x}, {soft})"


def pointwise(node: Node, a: list[str]) -> str:
    """The Triton expression computing `node` from its operands' variable names."""
    op, at = node.op, node.attrs
    if op in BINARY:
        return f"{a[0]} {BINARY[op]} {a[1]}"
    if op in UNARY_FN:
        return f"{UNARY_FN[op]}({a[0]})"
    x = a[0] if a else ""
    if op == "neg":
        return f"-{x}"
    if op == "relu":
        return f"tl.maximum({x}, 0.0)"
    if op == "tanh":
        return tanh(x)
    if op == "gelu":
        return f"0.5 * {x} * (1.0 + tl.erf({x} * 0.7071067811865476))"
    if op == "gelu_tanh":
        return f"0.5 * {x} * (1.0 + {tanh(f'0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})')})"
    if op == "silu":
        return f"{x} * tl.sigmoid({x})"
    if op == "mish":
        return f"{x} * {tanh(softplus(x))}"
    if op == "softplus":
        return softplus(x, at["beta"], at["threshold"])
    if op == "square":
        return f"{x} * {x}"
    if op == "pow":
        e = at["exponent"]
        if e == 0.5:
            return f"tl.sqrt({x})"
        if e == -0.5:
            return f"tl.rsqrt({x})"
        n = int(abs(e))
        prod = " * ".join([x] * n)
        return f"({prod})" if e > 0 else f"1.0 / ({prod})"
    if op == "maximum":
        return f"tl.maximum({a[0]}, {a[1]})"
    if op == "minimum":
        return f"tl.minimum({a[0]}, {a[1]})"
    if op == "where":
        return f"tl.where({a[0]}, {a[1]}, {a[2]})"
    if op == "clamp":
        out = x
        if at.get("lo") is not None:
            out = f"tl.maximum({out}, {literal(at['lo'])})"
        if at.get("hi") is not None:
            out = f"tl.minimum({out}, {literal(at['hi'])})"
        return out
    if op == "reciprocal":
        return f"1.0 / {x}"
    if op == "log1p":
        return f"_log1p({x})"
    if op == "expm1":
        return f"_expm1({x})"
    if op == "leaky_relu":
        return f"tl.where({x} > 0, {x}, {x} * {literal(at['slope'])})"
    if op == "elu":
        inner = f"{literal(at['alpha'])} * _expm1({x} * {literal(at['input_scale'])})"
        out = f"tl.where({x} > 0, {x}, {inner})"
        return out if at["scale"] == 1.0 else f"{literal(at['scale'])} * {out}"
    if op == "hardsigmoid":
        return f"tl.minimum(tl.maximum({x} / 6.0 + 0.5, 0.0), 1.0)"
    if op == "hardswish":
        return f"{x} * tl.minimum(tl.maximum({x} + 3.0, 0.0), 6.0) / 6.0"
    if op == "sign":
        return f"tl.where({x} > 0, 1.0, tl.where({x} < 0, -1.0, 0.0))"
    if op == "logical_not":
        return f"{x} == 0"
    if op == "cast":
        to = at["to"]
        if to.is_floating_point:
            return f"{x}.to(tl.float32)"
        return f"{x}.to({TL_DTYPES[to]})"
    raise UnsupportedError(op, "no Triton expression for this pointwise op")
