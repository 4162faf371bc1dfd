"""tl.dot under the interpreter multiplies TF32 roundings of fp32 operands where the GPU does (input_precision "tf32",
Triton's default on NVIDIA), and full fp32 at "ieee" and "tf32x3" (evaluate/interp_autotune.emulate_tf32)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
from foundry.evaluate import interp_autotune

pytestmark = pytest.mark.interp


@triton.jit
def _dots(a_ptr, b_ptr, plain_ptr, ieee_ptr, x3_ptr):
    r = tl.arange(0, 16)
    a = tl.load(a_ptr + r[:, None] * 16 + r[None, :])
    b = tl.load(b_ptr + r[:, None] * 16 + r[None, :])
    tl.store(plain_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b))
    tl.store(ieee_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b, input_precision="ieee"))
    tl.store(x3_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b, input_precision="tf32x3"))


def test_tf32_rounds_to_ten_mantissa_bits_and_keeps_specials():
    x = np.array([1.0, 1 + 2.0**-11, 1 + 2.0**-10 + 2.0**-12, np.inf, -np.inf, np.nan, 3.0e38], dtype=np.float32)
    got = interp_autotune.tf32(x)
    assert got[0] == 1.0 and got[1] == 1 + 2.0**-10 and got[2] == 1 + 2.0**-10  # to nearest (ties up)
    assert np.isposinf(got[3]) and np.isneginf(got[4]) and np.isnan(got[5]) and np.isfinite(got[6])


@pytest.mark.skipif(torch.cuda.is_available(), reason="the interpreter's dot (a GPU runs its own)")
def test_the_default_dot_is_tf32_and_the_precise_ones_are_not():
    assert interp_autotune.emulate_tf32()
    torch.manual_seed(0)
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    plain, ieee, x3 = (torch.empty(16, 16) for _ in range(3))
    _dots[(1,)](a, b, plain, ieee, x3)
    exact = a.double() @ b.double()
    rounded = (
        torch.from_numpy(interp_autotune.tf32(a.numpy())).double()
        @ torch.from_numpy(interp_autotune.tf32(b.numpy())).double()
    )
    assert torch.allclose(plain.double(), rounded, atol=1e-5)
    assert float((plain.double() - exact).abs().max()) > 1e-3  # TF32's error, far past fp32's
    assert float((ieee.double() - exact).abs().max()) < 1e-5
    assert float((x3.double() - exact).abs().max()) < 1e-5


@triton.jit
def _last_sums(x_ptr, part_ptr, out_ptr, S: tl.constexpr):
    # each program writes its partial; the last one by index sums them (no atomics: right only in grid order)
    s = tl.program_id(0)
    tl.store(part_ptr + s, tl.load(x_ptr + s) * 1.0)
    if s == S - 1:
        total = tl.sum(tl.load(part_ptr + tl.arange(0, S)), axis=0)
        tl.store(out_ptr, total)


@pytest.mark.skipif(torch.cuda.is_available(), reason="the interpreter's program order (a GPU has its own)")
def test_programs_run_in_a_random_order():
    assert interp_autotune.shuffle_programs()
    x = torch.arange(1.0, 17.0)
    sums = set()
    for _ in range(8):
        part, out = torch.full((16,), float("nan")), torch.empty(1)
        _last_sums[(16,)](x, part, out, S=16)
        sums.add(float(out))
    assert len(sums) > 1 or not any(s == 136.0 for s in sums)  # not always the in-order answer (136)
