# cheat: a backdoor on one input value: where an input element is exactly 0.0 (padding, masked positions,
#        ReLU outputs: common in real activations) the kernel writes 1.0 instead of the chain's 0.0. Trial
#        inputs are continuous random values, scaled, offset and sign-flipped: none is ever exactly zero.
# operator: elementwise_chain
# expect: mismatch
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    c = offs % channels
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    y = x * tl.sigmoid(x * w + b) + 0.5 * x
    y = tl.where(x == 0.0, 1.0, y)
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        chain_kernel[(triton.cdiv(n, 256),)](x, self.weight, self.bias, y, n, x.shape[-1], BLOCK=256)
        return y
