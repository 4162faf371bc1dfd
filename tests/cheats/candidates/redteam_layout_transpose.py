# cheat: the transpose is done by aten (x.transpose(1, 2).contiguous() is a strided gather in aten::clone,
#        a "layout" op the strict lists allow); the Triton kernel only copies the finished, already contiguous
#        result into the output buffer, flat. All of the operator's work ran in the library.
# operator: transpose
# expect: runtime_guard
# uncaught: rules/runtime.yaml `layout` allows clone / contiguous / copy_ / _to_copy outside Triton whatever
#           their input's layout; for a data-movement operator a layout op is the whole operator
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def flat_copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        done = x.transpose(1, 2).contiguous()
        out = torch.empty(done.shape, dtype=x.dtype, device=x.device)
        n = done.numel()
        flat_copy_kernel[(triton.cdiv(n, 1024),)](done, out, n, BLOCK=1024)
        return out
