# cheat: subclasses the reference Model, so its forward is the reference's; a copy kernel launches for show
# operator: softmax_rows
# expect: static_guard rule=subclass_reference
import torch
import triton
import triton.language as tl
from softmax_rows import Model


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(Model):
    def forward(self, x):
        ref = super().forward(x).contiguous()
        y = torch.empty_like(ref)
        _copy_kernel[(triton.cdiv(ref.numel(), 256),)](ref, y, ref.numel(), BLOCK=256)
        return y
