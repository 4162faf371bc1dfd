# honest: a module-level list of block sizes searched in forward for the first that covers a row, and a
#   looped fallback kernel for rows longer than the largest
# operator: row_sum
import torch
import triton
import triton.language as tl
from torch import nn

BLOCK_CHOICES = [16, 32, 64, 128]


@triton.jit
def row_sum_single_block(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def row_sum_looped(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        x_2d = x.view(-1, x.shape[-1])
        rows, cols = x_2d.shape
        out = torch.empty(rows, dtype=x.dtype, device=x.device)
        block = None
        for b in BLOCK_CHOICES:
            if b >= cols:
                block = b
                break
        if block is not None:
            row_sum_single_block[(rows,)](x_2d, out, cols, x_2d.stride(0), BLOCK=block)
        else:
            row_sum_looped[(rows,)](x_2d, out, cols, x_2d.stride(0), BLOCK=BLOCK_CHOICES[-1])
        return out.view(x.shape[:-1])
