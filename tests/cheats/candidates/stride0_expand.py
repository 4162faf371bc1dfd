# cheat: computes one row and returns it expanded over the batch (stride 0): one row of work, and a
#        checker that only looks at output[0] or at shapes would pass
# operator: softmax_rows
# expect: shape_mismatch rule=stride
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        row = torch.empty(x.shape[1], device=x.device, dtype=x.dtype)
        _softmax_kernel[(1,)](x, row, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return row.expand(x.shape)
