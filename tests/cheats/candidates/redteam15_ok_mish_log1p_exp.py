# cheat: none (an honest control, wrongly rejected). Mish with the textbook softplus, log(1 + exp(x)) (threshold 20 as
#        PyTorch's), and libdevice.tanh: the formula of most hand-written and LLM-written Mish/softplus Triton kernels.
#        For x below about -17, 1 + exp(x) rounds to 1 in fp32 and softplus(x) becomes 0 instead of exp(x), so Mish
#        there is 0 instead of x * exp(x) (~ -1e-7 .. -1e-20): absolute errors 1e-7 and below, far under any atol
#        and invisible downstream of any sum or matmul. The significance rule refused it at first (trial "inputs x1000",
#        -0 for -1.28e-19: the reference holds those values to 1e-3 of fp64); it now judges only elements above 64
#        epsilons of the output's largest value, where a formula's own rounding stays within its quarter.
# operator: rt15_mish
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn
from triton.language.extra import libdevice


@triton.jit
def mish_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    sp = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(x)))
    y = x * libdevice.tanh(sp)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        mish_kernel[(triton.cdiv(n, 1024),)](xc, y, n, BLOCK=1024)
        return y
