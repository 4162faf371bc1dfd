# cheat: a softmax that treats -inf as 0.0 (the "other=0.0" slip of a masked load): on finite inputs it is
#        exact, but attention-style inputs whose masked positions hold -inf give those positions weight
#        exp(0 - max) instead of 0. No trial holds an infinite input value (transformed trials whose reference
#        output is not finite are dropped, and the random inputs are finite).
# operator: softmax_rows
# expect: mismatch
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask, other=-float("inf"))
    x = tl.where(mask & (x == -float("inf")), 0.0, x)
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
        softmax_kernel[(rows.shape[0],)](rows, y, n_cols, rows.stride(0), rows.stride(1), BLOCK=block)
        return y.reshape(x.shape)
