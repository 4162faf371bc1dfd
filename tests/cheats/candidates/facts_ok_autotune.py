# cheat: none (a control). Row softmax in the style LLMs write it: a multi-config @triton.autotune over block
#        size and warps keyed on the row length, a grid lambda reading the chosen block. Under the interpreter
#        each config is the one checked in turn (evaluate/interp_autotune.py); it used to fail with
#        "0 active drivers".
# operator: softmax_rows
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 64}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=8),
    ],
    key=["n_cols"],
)
@triton.jit
def _softmax_fwd_kernel(x_ptr, y_ptr, n_cols, x_stride, y_stride, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    row_max = tl.full([BLOCK_SIZE], float("-inf"), tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + offs
        x = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols, other=float("-inf"))
        row_max = tl.maximum(row_max, x.to(tl.float32))
    peak = tl.max(row_max, axis=0)
    total = tl.zeros([BLOCK_SIZE], tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + offs
        x = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols, other=float("-inf"))
        total += tl.exp(x.to(tl.float32) - peak)
    denom = tl.sum(total, axis=0)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + offs
        x = tl.load(x_ptr + row * x_stride + cols, mask=cols < n_cols, other=float("-inf"))
        y = tl.exp(x.to(tl.float32) - peak) / denom
        tl.store(y_ptr + row * y_stride + cols, y, mask=cols < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n_rows, n_cols = x2.shape
        _softmax_fwd_kernel[lambda meta: (n_rows,)](x2, y, n_cols, x2.stride(0), y.stride(0))
        return y.view(x.shape)
