# cheat: computes the softmax in place in the input's memory and returns a view of the input
# operator: softmax_rows
# expect: aliasing rule=aliasing
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_inplace_kernel(x_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(x_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        _softmax_inplace_kernel[(x.shape[0],)](x, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return x.view(x.shape)
