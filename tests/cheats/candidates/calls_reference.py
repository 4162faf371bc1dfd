# cheat: instantiates the reference Model (as if it were in scope) and returns its output
# operator: softmax_rows
# expect: static_guard rule=reference_access
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.reference = Model()

    def forward(self, x):
        ref = self.reference(x).contiguous()
        y = torch.empty_like(ref)
        _copy_kernel[(triton.cdiv(ref.numel(), 256),)](ref, y, ref.numel(), BLOCK=256)
        return y
