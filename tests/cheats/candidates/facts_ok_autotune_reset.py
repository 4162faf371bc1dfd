# cheat: none (a control). Row softmax whose row sums are accumulated with tl.atomic_add into a buffer the
#        autotuner zeroes before each config it tries (reset_to_zero), then divided by a second kernel; the
#        forward zeroes the buffer itself too (autotune resets it only while tuning).
# operator: softmax_rows
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn


@triton.autotune(
    configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})],
    key=["n_cols"],
    reset_to_zero=["sum_ptr"],
)
@triton.jit
def _exp_sum_kernel(x_ptr, e_ptr, sum_ptr, max_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    cols = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    peak = tl.load(max_ptr + row)
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    e = tl.exp(x - peak)
    tl.store(e_ptr + row * n_cols + cols, e, mask=mask)
    tl.atomic_add(sum_ptr + row, tl.sum(tl.where(mask, e, 0.0), axis=0))


@triton.jit
def _row_max_kernel(x_ptr, max_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
    tl.store(max_ptr + row, tl.max(x, axis=0))


@triton.jit
def _divide_kernel(e_ptr, sum_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    e = tl.load(e_ptr + row * n_cols + cols, mask=mask)
    tl.store(y_ptr + row * n_cols + cols, e / tl.load(sum_ptr + row), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        n_rows, n_cols = x2.shape
        whole = triton.next_power_of_2(n_cols)
        row_max = torch.empty(n_rows, device=x.device, dtype=torch.float32)
        sums = torch.zeros(n_rows, device=x.device, dtype=torch.float32)
        e = torch.empty_like(x2)
        y = torch.empty_like(x2)
        _row_max_kernel[(n_rows,)](x2, row_max, n_cols, BLOCK=whole)
        _exp_sum_kernel[lambda meta: (n_rows, triton.cdiv(n_cols, meta["BLOCK"]))](x2, e, sums, row_max, n_cols)
        _divide_kernel[(n_rows,)](e, sums, y, n_cols, BLOCK=whole)
        return y.view(x.shape)
