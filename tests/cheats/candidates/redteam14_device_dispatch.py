# cheat: launches a different kernel on a GPU than in the CPU check. `foundry check` on a machine without a GPU
#        runs the candidate under the Triton interpreter with CPU tensors, so `x.is_cuda` is False there: the
#        check runs the honest kernel, and every GPU run takes the other branch (a kernel that drops the sigmoid
#        gate). The sm_90 static compile compiles the kernels the CPU run launched, never the GPU branch's.
#        Closed by the static guard's device_dispatch: a device test may only choose device properties (the SM
#        count on a GPU, a constant elsewhere) or an allocation's device.
# operator: elementwise_chain
# expect: static_guard rule=device_dispatch
# uncaught: device_dispatch is a warning in rules/guard.yaml until codegen/rowsplit.py's spin_limit stops testing
#        the device; set it to error then and this case is caught
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    ch = offs % C
    w = tl.load(w_ptr + ch, mask=mask, other=0.0)
    b = tl.load(b_ptr + ch, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x * w + b) + 0.5 * x, mask=mask)


@triton.jit
def fast_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, C, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, channels))
        self.bias = nn.Parameter(torch.linspace(-0.25, 0.25, channels))

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        kernel = fast_kernel if xc.is_cuda else chain_kernel
        kernel[(triton.cdiv(n, 256),)](xc, self.weight, self.bias, y, n, xc.shape[-1], BLOCK=256)
        return y
