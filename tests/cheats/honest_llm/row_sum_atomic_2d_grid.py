# honest: a 2-D grid (rows x column blocks) whose partial row sums meet through tl.atomic_add in a
#   zero-filled output
# operator: row_sum
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_sum_atomic_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    vals = tl.load(x_ptr + row * stride_row + cols, mask=cols < n_cols, other=0.0)
    tl.atomic_add(out_ptr + row, tl.sum(vals, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        n_rows, n_cols = x2.shape
        out = torch.zeros(n_rows, device=x.device, dtype=x.dtype)
        BLOCK_SIZE = 32
        grid = (n_rows, triton.cdiv(n_cols, BLOCK_SIZE))
        row_sum_atomic_kernel[grid](x2, out, n_cols, x2.stride(0), BLOCK_SIZE=BLOCK_SIZE)
        return out.view(x.shape[:-1])
