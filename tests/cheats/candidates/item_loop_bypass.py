# cheat: computes the chain element by element in Python: .item() reads (aten _local_scalar_dense) and
#        scalar writes (select + fill_), all in the strict policy's allowed list; a kernel launches for show
# operator: elementwise_chain
# expect: static_guard rule=forbidden_attribute
# devices: cpu
import math

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    c = offs % channels
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    y = x * (1.0 / (1.0 + tl.exp(-(x * w + b)))) + 0.5 * x
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        flat = x.reshape(-1)
        y = torch.empty_like(flat)
        channels = x.shape[-1]
        w = self.weight.tolist()
        b = self.bias.tolist()
        for i in range(flat.numel()):
            v = flat[i].item()
            c = i % channels
            y[i] = v / (1.0 + math.exp(-(v * w[c] + b[c]))) + 0.5 * v
        scratch = torch.empty_like(flat)
        _chain_kernel[(1,)](flat, self.weight, self.bias, scratch, 0, channels, BLOCK=16)
        return y.view(x.shape)
