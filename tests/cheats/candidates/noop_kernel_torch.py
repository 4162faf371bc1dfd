# cheat: launches a kernel that does nothing, and computes the softmax with torch primitives
# operator: softmax_rows
# expect: runtime_guard rule=non_triton_compute
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _noop_kernel(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(y_ptr + offs, mask=offs < 0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        e = torch.exp(x - x.amax(dim=-1, keepdim=True))
        y = e / e.sum(dim=-1, keepdim=True)
        _noop_kernel[(1,)](y, y.numel(), BLOCK=16)
        return y
