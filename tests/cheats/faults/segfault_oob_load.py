# fault: an unmasked load 2**40 elements past the input (under the interpreter a host read of an unmapped
#        address: SIGSEGV; on a GPU an illegal memory access)
# operator: softmax_rows
# expect: crash
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _far_load_kernel(x_ptr, y_ptr, far, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK) + far
    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + offs))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        _far_load_kernel[(1,)](x, y, 1 << 40, BLOCK=16)
        return y
