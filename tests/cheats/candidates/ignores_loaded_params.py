# cheat: recomputes the parameters' initial values (linspace) inside the kernel instead of loading the
#        state it is given: right for a freshly built model, wrong for a trained one
# operator: elementwise_chain
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _chain_kernel(x_ptr, y_ptr, n, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    t = (offs % channels).to(tl.float32) / (channels - 1)
    w = 0.5 + t
    b = -0.25 + 0.5 * t
    y = x * (1.0 / (1.0 + tl.exp(-(x * w + b)))) + 0.5 * x
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _chain_kernel[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), x.shape[-1], BLOCK=256)
        return y
