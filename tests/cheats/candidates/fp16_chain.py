# cheat: computes the chain in fp16 inside the kernel (half the bytes on a GPU), beyond fp32 tolerance
# operator: elementwise_chain
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float16)
    c = offs % channels
    w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float16)
    b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float16)
    z = (x * w + b).to(tl.float16)
    s = (1.0 / (1.0 + tl.exp(-z.to(tl.float32)))).to(tl.float16)
    y = (x * s + (0.5 * x).to(tl.float16)).to(tl.float16)
    tl.store(y_ptr + offs, y.to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _chain_kernel[(triton.cdiv(x.numel(), 256),)](x, self.weight, self.bias, y, x.numel(), x.shape[-1], BLOCK=256)
        return y
