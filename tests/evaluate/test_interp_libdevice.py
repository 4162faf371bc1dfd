"""interp_libdevice: Triton's libdevice under the interpreter (the CPU check) matches torch on CPU, keeps the
CUDA module's dtype dispatch (fp16 is refused as compiled), and every function the static guard lets through
is implemented. The kernels run in a child with TRITON_INTERPRET=1 (Triton reads it when a kernel is defined)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

from foundry.evaluate.interp_libdevice import implemented, symbols

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, math
import torch, triton, triton.language as tl
from foundry.evaluate import interp_autotune
assert interp_autotune.install()
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice

@triton.jit
def unary(x_ptr, y_ptr, n, OP: tl.constexpr, B: tl.constexpr):
    offs = tl.arange(0, B)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    if OP == "erf":
        y = libdevice.erf(x)
    elif OP == "erfc":
        y = libdevice.erfc(x)
    elif OP == "tanh":
        y = libdevice.tanh(x)
    elif OP == "pow":
        y = libdevice.pow(x, 1.5)
    elif OP == "powi":
        y = libdevice.pow(x, 3)
    elif OP == "exp":
        y = cuda_libdevice.exp(x)
    elif OP == "expm1":
        y = libdevice.expm1(x)
    elif OP == "log1p":
        y = libdevice.log1p(x)
    elif OP == "lgamma":
        y = libdevice.lgamma(x)
    elif OP == "asinh":
        y = libdevice.asinh(x)
    elif OP == "atan2":
        y = libdevice.atan2(x, x + 1.0)
    elif OP == "rint":
        y = libdevice.rint(x)
    elif OP == "fmod":
        y = libdevice.fmod(x, 0.7)
    elif OP == "isnan":
        y = libdevice.isnan(x).to(tl.float32)
    else:
        y = libdevice.float2int_rn(x * 3.0).to(tl.float32)
    tl.store(y_ptr + offs, y, mask=m)

@triton.jit
def half(x_ptr, y_ptr, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    m = offs < n
    tl.store(y_ptr + offs, libdevice.erf(tl.load(x_ptr + offs, mask=m)), mask=m)

torch.manual_seed(0)
special = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 30.0, -30.0, float("inf"), float("-inf"), float("nan")]
x = torch.cat([torch.randn(200) * 3, torch.tensor(special)])
refs = {
    "erf": torch.erf, "erfc": torch.erfc, "tanh": torch.tanh, "pow": lambda v: torch.pow(v, 1.5),
    "powi": lambda v: v ** 3, "exp": torch.exp, "expm1": torch.expm1, "log1p": torch.log1p, "lgamma": torch.lgamma,
    "asinh": torch.asinh, "atan2": lambda v: torch.atan2(v, v + 1.0), "rint": torch.round,
    "fmod": lambda v: torch.fmod(v, 0.7), "isnan": lambda v: torch.isnan(v).float(),
    "f2i": lambda v: torch.nan_to_num(torch.round(v * 3.0), nan=0.0).clamp(-2**31, 2**31 - 1).float(),
}
out = {}
for op, ref in refs.items():
    y = torch.empty_like(x)
    unary[(1,)](x, y, x.numel(), OP=op, B=256)
    out[op] = torch.allclose(y, ref(x), rtol=4e-6, atol=1e-6, equal_nan=True)
xd = x.double()
yd = torch.empty_like(xd)
unary[(1,)](xd, yd, xd.numel(), OP="erf", B=256)
out["erf_fp64"] = torch.allclose(yd, torch.erf(xd), rtol=1e-13, atol=1e-15, equal_nan=True)
try:
    half[(1,)](x.half(), torch.empty(x.numel(), dtype=torch.half), x.numel(), B=256)
    out["half_refused"] = False
except Exception:
    out["half_refused"] = True
print("RESULT", json.dumps(out))
"""


def test_libdevice_matches_torch_under_the_interpreter() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT / "bot")}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=600)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, done.stderr[-3000:]
    result = json.loads(line[len("RESULT ") :])
    assert all(result.values()), result


def test_every_implemented_name_is_a_libdevice_function() -> None:
    from triton.language.extra import libdevice
    from triton.language.extra.cuda import libdevice as cuda

    stub = {n for n, v in vars(libdevice).items() if inspect.isfunction(v)}
    assert implemented() <= stub
    assert implemented() <= set(vars(cuda))
    assert set(symbols().values()) <= stub  # every CUDA symbol maps to a function of the stub module
