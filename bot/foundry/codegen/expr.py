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


def tanh(x: str) -> str:
    return f"(2.0 * tl.sigmoid(2.0 * {x}) - 1.0)"


def softplus(x: str, beta: float = 1.0, threshold: float = 20.0) -> str:
    scaled = x if beta == 1.0 else f"({x} * {literal(beta)})"
    soft = f"tl.log(1.0 + tl.exp({scaled}))" if beta == 1.0 else f"(tl.log(1.0 + tl.exp({scaled})) / {literal(beta)})"
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
        return f"tl.log(1.0 + {x})"
    if op == "expm1":
        return f"(tl.exp({x}) - 1.0)"
    if op == "leaky_relu":
        return f"tl.where({x} > 0, {x}, {x} * {literal(at['slope'])})"
    if op == "elu":
        inner = f"{literal(at['alpha'])} * (tl.exp({x} * {literal(at['input_scale'])}) - 1.0)"
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
