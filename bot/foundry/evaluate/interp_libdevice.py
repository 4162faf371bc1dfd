"""Triton's libdevice under the interpreter (TRITON_INTERPRET=1, the CPU path).

`from triton.language.extra import libdevice` is a stub module: compiled, Triton's code generator maps it to the
backend's libdevice (triton.language.extra.cuda.libdevice, calls into NVIDIA's libdevice bitcode); under the
interpreter nothing maps it, so libdevice.erf(x) returned None, and the CUDA module's functions reach
InterpreterBuilder.create_extern_elementwise, which raises. Honest kernels that use libdevice (Liger's, Unsloth's,
most LLM-written exact GELUs) failed the CPU check although they are right on a GPU.

install() makes both modules' functions run the CUDA module's own code under the interpreter (its argument
checks, broadcasting and dtype dispatch, exactly as compiled) and gives the interpreter's builder a
create_extern_elementwise that computes each libdevice symbol with NumPy (float64 internally, rounded to the
symbol's result type). IMPLEMENTED names the functions done here; the static guard refuses the others (directed
rounding modes, Bessel functions, inverse error functions, byte_perm, rcp64h, fast_tanhf), so a kernel never
reaches an unimplemented one on CPU with a confusing error.

Imports only stdlib, numpy and triton (it runs inside the untrusted child)."""

from __future__ import annotations

import ast
import functools
import inspect
import math
import os
from collections.abc import Callable
from typing import Any

PATCHED: dict[str, Any] = {}  # what install() put in place (not a marker on the patched objects)


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


# -- the NumPy implementations, by libdevice function name ----------------------------------------------------


def _np() -> Any:
    import numpy as np

    return np


def _vectorized(fn: Callable[[float], float]) -> Callable[[Any], Any]:
    def run(x: Any) -> Any:
        np = _np()
        return np.vectorize(lambda v: _guarded(fn, float(v)), otypes=[np.float64])(x)

    return run


def _guarded(fn: Callable[[float], float], v: float) -> float:
    """math's functions raise where libdevice answers inf or nan (poles, overflow)."""
    try:
        return fn(v)
    except OverflowError:
        return math.inf
    except ValueError:
        if fn is math.lgamma:  # poles: lgamma(0), lgamma(-n) = +inf
            return math.inf
        if fn is math.gamma and v == 0.0:
            return math.copysign(math.inf, v)
        return math.nan


def _round_half_away(x: Any) -> Any:
    np = _np()
    r = np.trunc(x)
    return r + np.where(np.abs(x - r) >= 0.5, np.sign(x), 0.0)


def _erfcx(v: float) -> float:
    if v < 25.0:
        return math.exp(v * v) * math.erfc(v)
    t = 1.0 / (v * v)  # asymptotic series: erfc underflows where exp(v^2) is still finite
    return (1.0 - 0.5 * t + 0.75 * t * t - 1.875 * t**3) / (v * math.sqrt(math.pi))


def _logb(x: Any) -> Any:
    np = _np()
    _, e = np.frexp(x)
    out = (e - 1).astype(np.float64)
    out = np.where(x == 0, -np.inf, out)
    out = np.where(np.isinf(x), np.inf, out)
    return np.where(np.isnan(x), np.nan, out)


def _ilogb(x: Any) -> Any:
    np = _np()
    _, e = np.frexp(x)
    out = (e - 1).astype(np.int64)
    out = np.where(x == 0, -(2**31), out)  # FP_ILOGB0
    out = np.where(np.isinf(x), 2**31 - 1, out)
    return np.where(np.isnan(x), -(2**31), out)  # FP_ILOGBNAN


def _to_int(mode: str) -> Callable[[Any], Any]:
    """float -> integer conversions (rn/rz/rd/ru): round, then the result type's saturation; NaN becomes 0."""

    def run(x: Any) -> Any:
        np = _np()
        rounded = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode](x)
        return np.where(np.isnan(x), 0.0, rounded)

    return run


def _bits(kind: str) -> Callable[..., Any]:
    def run(x: Any, *rest: Any) -> Any:
        np = _np()
        if kind == "clz":
            width = x.dtype.itemsize * 8
            u = x.view(np.uint32 if width == 32 else np.uint64).astype(object)
            return np.array([width - int(v).bit_length() for v in u.ravel()], dtype=np.int64).reshape(x.shape)
        if kind == "popc":
            width = x.dtype.itemsize * 8
            u = x.view(np.uint32 if width == 32 else np.uint64).astype(object)
            return np.array([bin(int(v)).count("1") for v in u.ravel()], dtype=np.int64).reshape(x.shape)
        if kind == "ffs":
            width = x.dtype.itemsize * 8
            u = x.view(np.uint32 if width == 32 else np.uint64).astype(object)
            return np.array([(int(v) & -int(v)).bit_length() for v in u.ravel()], dtype=np.int64).reshape(x.shape)
        if kind == "brev":
            width = x.dtype.itemsize * 8
            unsigned = np.uint32 if width == 32 else np.uint64
            u = x.view(unsigned).astype(object)
            rev = [int(format(int(v), f"0{width}b")[::-1], 2) for v in u.ravel()]
            return np.array(rev, dtype=unsigned).reshape(x.shape).view(x.dtype)
        if kind == "mulhi":
            y = rest[0]
            width = x.dtype.itemsize * 8
            unsigned = np.uint32 if width == 32 else np.uint64
            mask = (1 << width) - 1
            high = [((int(a) * int(b)) >> width) & mask for a, b in zip(x.ravel(), y.ravel(), strict=True)]
            return np.array(high, dtype=unsigned).reshape(x.shape).view(x.dtype)
        if kind == "mul24":
            y = rest[0]
            signed = x.dtype.kind == "i"

            def low24(v: int) -> int:
                v &= 0xFFFFFF
                return v - (1 << 24) if signed and v & 0x800000 else v

            prod = [(low24(int(a)) * low24(int(b))) & 0xFFFFFFFF for a, b in zip(x.ravel(), y.ravel(), strict=True)]
            return np.array(prod, dtype=np.uint32).reshape(x.shape).view(x.dtype)
        if kind in ("hadd", "rhadd"):
            y = rest[0]
            total = x.astype(np.int64) + y.astype(np.int64) + (1 if kind == "rhadd" else 0)
            return total >> 1
        if kind == "sad":
            y, z = rest
            return np.abs(x.astype(np.int64) - y.astype(np.int64)) + z.astype(np.int64)
        raise AssertionError(kind)

    return run


@functools.cache
def implementations() -> dict[str, Callable[..., Any]]:
    """libdevice function name -> NumPy function of its (broadcast, dtype-checked) arguments."""
    np = _np()
    sqrt2 = math.sqrt(2.0)
    impl: dict[str, Callable[..., Any]] = {
        "abs": np.abs,
        "floor": np.floor,
        "ceil": np.ceil,
        "trunc": np.trunc,
        "rint": np.rint,
        "nearbyint": np.rint,
        "round": _round_half_away,
        "exp": np.exp,
        "exp2": np.exp2,
        "exp10": lambda x: np.power(10.0, x),
        "expm1": np.expm1,
        "log": np.log,
        "log2": np.log2,
        "log10": np.log10,
        "log1p": np.log1p,
        "sqrt": np.sqrt,
        "rsqrt": lambda x: 1.0 / np.sqrt(x),
        "cbrt": np.cbrt,
        "rcbrt": lambda x: 1.0 / np.cbrt(x),
        "sin": np.sin,
        "cos": np.cos,
        "tan": np.tan,
        "sinpi": lambda x: np.sin(np.pi * np.remainder(x, 2.0)),
        "cospi": lambda x: np.cos(np.pi * np.remainder(x, 2.0)),
        "asin": np.arcsin,
        "acos": np.arccos,
        "atan": np.arctan,
        "sinh": np.sinh,
        "cosh": np.cosh,
        "tanh": np.tanh,
        "asinh": np.arcsinh,
        "acosh": np.arccosh,
        "atanh": np.arctanh,
        "erf": _vectorized(math.erf),
        "erfc": _vectorized(math.erfc),
        "erfcx": _vectorized(_erfcx),
        "normcdf": lambda x: 0.5 * _vectorized(math.erfc)(-x / sqrt2),
        "lgamma": _vectorized(math.lgamma),
        "tgamma": _vectorized(math.gamma),
        "cyl_bessel_i0": np.i0,
        "saturatef": lambda x: np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 1.0)),
        "logb": _logb,
        "ilogb": _ilogb,
        "isnan": lambda x: np.isnan(x).astype(np.int32),
        "isinf": lambda x: np.isinf(x).astype(np.int32),
        "finitef": lambda x: np.isfinite(x).astype(np.int32),
        "isfinited": lambda x: np.isfinite(x).astype(np.int32),
        "signbit": lambda x: np.signbit(x).astype(np.int32),
        "llrint": lambda x: np.rint(x),
        "llround": _round_half_away,
        # arithmetic in the default rounding mode (round to nearest even)
        "rcp_rn": lambda x: 1.0 / x,
        "sqrt_rn": np.sqrt,
        "rsqrt_rn": lambda x: 1.0 / np.sqrt(x),
        "div_rn": lambda x, y: x / y,
        "fast_dividef": lambda x, y: x / y,
        "add_rn": lambda x, y: x + y,
        "sub_rn": lambda x, y: x - y,
        "mul_rn": lambda x, y: x * y,
        "fma": lambda x, y, z: x * y + z,
        "fma_rn": lambda x, y, z: x * y + z,
        "double2float_rn": lambda x: x,
        "int2float_rn": lambda x: x,
        "uint2float_rn": lambda x: x,
        "ll2float_rn": lambda x: x,
        "ull2float_rn": lambda x: x,
        "int2double_rn": lambda x: x,
        "uint2double_rn": lambda x: x,
        "ll2double_rn": lambda x: x,
        "ull2double_rn": lambda x: x,
        # fast approximations: the accurate function (within their documented error)
        "fast_expf": np.exp,
        "fast_exp10f": lambda x: np.power(10.0, x),
        "fast_logf": np.log,
        "fast_log2f": np.log2,
        "fast_log10f": np.log10,
        "fast_sinf": np.sin,
        "fast_cosf": np.cos,
        "fast_tanf": np.tan,
        "fast_powf": lambda x, y: np.power(x, y),
        # two and more arguments
        "atan2": np.arctan2,
        "hypot": np.hypot,
        "rhypot": lambda x, y: 1.0 / np.hypot(x, y),
        "pow": lambda x, y: np.power(x, y),
        "fmod": np.fmod,
        "remainder": lambda x, y: np.vectorize(_ieee_remainder, otypes=[np.float64])(x, y),
        "copysign": np.copysign,
        "fdim": lambda x, y: np.where(np.isnan(x) | np.isnan(y), np.nan, np.maximum(x - y, 0.0)),
        "norm3d": lambda a, b, c: np.sqrt(a * a + b * b + c * c),
        "rnorm3d": lambda a, b, c: 1.0 / np.sqrt(a * a + b * b + c * c),
        "norm4d": lambda a, b, c, d: np.sqrt(a * a + b * b + c * c + d * d),
        "rnorm4d": lambda a, b, c, d: 1.0 / np.sqrt(a * a + b * b + c * c + d * d),
        # bit-level
        "clz": _bits("clz"),
        "popc": _bits("popc"),
        "ffs": _bits("ffs"),
        "brev": _bits("brev"),
        "mulhi": _bits("mulhi"),
        "mul24": _bits("mul24"),
        "hadd": _bits("hadd"),
        "rhadd": _bits("rhadd"),
        "sad": _bits("sad"),
    }
    for source in ("float", "double"):
        for target in ("int", "uint", "ll", "ull"):
            for mode in ("rn", "rz", "rd", "ru"):
                impl[f"{source}2{target}_{mode}"] = _to_int(mode)
    return impl


def _ieee_remainder(x: float, y: float) -> float:
    try:
        return math.remainder(x, y)
    except ValueError:
        return math.nan


# Computed in the argument's own type (bit patterns, the next representable value, exact scaling).
NATIVE = {
    "nextafter": lambda x, y: _np().nextafter(x, y),
    "ldexp": lambda x, n: _np().ldexp(x, n.astype(_np().int32)),
    "scalbn": lambda x, n: _np().ldexp(x, n.astype(_np().int32)),
    "float_as_int": lambda x: x.view(_np().int32),
    "int_as_float": lambda x: x.view(_np().float32),
    "float_as_uint": lambda x: x.view(_np().uint32),
    "uint_as_float": lambda x: x.view(_np().float32),
    "double_as_longlong": lambda x: x.view(_np().int64),
    "longlong_as_double": lambda x: x.view(_np().float64),
    "double2hiint": lambda x: (x.view(_np().int64) >> 32).astype(_np().int32),
    "double2loint": lambda x: (x.view(_np().uint64) & 0xFFFFFFFF).astype(_np().uint32).view(_np().int32),
    "hiloint2double": lambda hi, lo: ((hi.astype(_np().int64) << 32) | lo.view(_np().uint32).astype(_np().int64)).view(
        _np().float64
    ),
}


@functools.cache
def symbols() -> dict[str, str]:
    """libdevice symbol (__nv_erff) -> function name (erf), read from triton.language.extra.cuda.libdevice's
    dispatch tables."""
    from triton.language.extra.cuda import libdevice

    tree = ast.parse(inspect.getsource(libdevice))
    table: dict[str, str] = {}
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("__nv_"):
                table[node.value] = fn.name
    return table


@functools.cache
def implemented() -> frozenset[str]:
    """libdevice function names the interpreter runs here; the static guard refuses the rest."""
    return frozenset(implementations()) | frozenset(NATIVE)


def compute(symbol: str, args: list[Any], result_dtype: Any) -> Any:
    """One libdevice symbol on NumPy arrays (already broadcast by Triton), as result_dtype."""
    np = _np()
    name = symbols().get(symbol)
    if name in NATIVE:
        out = NATIVE[name](*args)
    elif name in implementations():
        fn = implementations()[name]
        floats = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
        with np.errstate(all="ignore"):
            out = fn(*floats)
    else:
        raise NotImplementedError(f"libdevice {name or symbol} has no interpreter implementation (CPU check)")
    out = np.asarray(out)
    with np.errstate(all="ignore"):
        if result_dtype.kind in "iu" and out.dtype.kind == "f":
            info = np.iinfo(result_dtype)
            out = np.clip(np.nan_to_num(out, nan=0.0), info.min, info.max)
            big = np.abs(out) >= 2**53  # float64 cannot hold the bounds of 64-bit integers exactly
            if big.any():
                values = [info.max if v > 0 else info.min for v in out[big]]
                out = out.astype(object)
                out[big] = values
        return out.astype(result_dtype)


def install() -> bool:
    """Under the interpreter, make triton.language.extra.libdevice and triton.language.extra.cuda.libdevice
    run (see the module's docstring). True if patched (now or before)."""
    if not interpreting():
        return False
    if PATCHED:
        return True
    from triton.language.extra import libdevice as stub
    from triton.language.extra.cuda import libdevice as cuda
    from triton.runtime import interpreter

    builder = getattr(interpreter, "InterpreterBuilder", None)
    semantic = vars(interpreter).get("interpreter_semantic")
    if builder is None or semantic is None or "create_extern_elementwise" not in vars(builder):
        return False
    handle = interpreter.TensorHandle
    to_np = interpreter._get_np_dtype

    def create_extern_elementwise(
        self: Any, lib_name: str, lib_path: str, symbol: str, args: list[Any], ret_type: Any, is_pure: bool
    ) -> Any:
        scalar = ret_type.scalar if hasattr(ret_type, "scalar") else ret_type
        return handle(compute(symbol, [a.data for a in args], to_np(scalar)), scalar)

    builder.create_extern_elementwise = create_extern_elementwise
    for name in implemented():
        member = vars(cuda).get(name)
        if member is None:
            continue

        def run(*args: Any, _member: Any = member, **kwargs: Any) -> Any:
            kwargs.pop("_semantic", None)
            return _member(*args, **kwargs, _semantic=semantic)

        run.__name__ = run.__qualname__ = name
        run.__doc__ = member.__doc__
        for module in (stub, cuda):
            setattr(module, name, run)
        PATCHED[name] = run
    return True
