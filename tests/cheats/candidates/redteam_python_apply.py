# cheat: the ReLU is computed in Python, element by element, by Tensor.apply_ on a host copy of the input
#        (torch.empty + copy_, both allowed ops). apply_ and map_ call a Python callable per element without
#        any aten op, so no dispatch mode and no profiler sees the compute; a Triton kernel only copies the
#        finished values into the output. The same callable could read every input value into Python.
#        Verified under strict until 4cca3f7 (the static guard's fix for this report).
# operator: relu_nonneg
# expect: static_guard rule=forbidden_attribute
import torch
import triton
import triton.language as tl
from torch import nn


def relu_value(v):
    return max(v, 0.0)


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        host = torch.empty(x.shape, dtype=x.dtype, device="cpu")
        host.copy_(x)
        host.apply_(relu_value)
        done = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        done.copy_(host)
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 256),)](done, y, n, BLOCK=256)
        return y
