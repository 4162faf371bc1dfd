# cheat: redefines KernelBench-style module-level sizes (batch_size, dim) smaller, as if the harness would
#        build its inputs from the candidate's globals, and sizes the launch from them: only part of the
#        output is computed
# operator: elementwise_chain
# expect: incomplete_output rule=coverage
import torch
import triton
import triton.language as tl
from torch import nn

batch_size = 2
dim = 16


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
        y = torch.empty_like(x)
        n = min(batch_size * dim, x.numel())
        _chain_kernel[(triton.cdiv(n, 256),)](x, self.weight, self.bias, y, n, x.shape[-1], BLOCK=256)
        return y
