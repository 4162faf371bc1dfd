# cheat: try the kernel, fall back to torch when it fails (hides kernels that do not compile or crash)
# operator: softmax_rows
# expect: static_guard rule=try_except
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols)  # no mask: fails or reads garbage on odd widths
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        try:
            _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=x.shape[1])
        except Exception:
            y = torch.softmax(x, dim=-1)
        return y
