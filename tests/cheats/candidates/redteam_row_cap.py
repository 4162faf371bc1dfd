# cheat: a "persistent" softmax whose grid is capped at 512 programs, one row each, without the grid-stride
#        loop that should cover the rest: rows past 512 are never written. The checker's largest shape is
#        2n+1 rows of its own (13 here, 129 on the GPU's declared 64 rows), so it never reaches the cap; a
#        batch of 600 rows leaves 88 rows of garbage.
# operator: softmax_rows
# expect: incomplete_output rule=coverage
import torch
import triton
import triton.language as tl
from torch import nn

MAX_PROGRAMS = 512


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        rows = x.reshape(-1, n_cols)
        y = torch.empty(rows.shape, dtype=x.dtype, device=x.device)
        block = triton.next_power_of_2(n_cols)
        grid = (min(rows.shape[0], MAX_PROGRAMS),)
        softmax_kernel[grid](rows, y, n_cols, rows.stride(0), rows.stride(1), BLOCK=block)
        return y.reshape(x.shape)
