# honest: a kernel picked by a conditional (an unmasked kernel when the size divides the block, a masked one
#   otherwise); exact GELU through tl.math.erf
# operator: gelu_silu
import math

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _gelu_silu(x):
    g = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    return g * tl.sigmoid(g)


@triton.jit
def gelu_silu_kernel_even(x_ptr, y_ptr, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    tl.store(y_ptr + offs, _gelu_silu(tl.load(x_ptr + offs)))


@triton.jit
def gelu_silu_kernel_masked(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, _gelu_silu(x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.block_size = 32

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        grid = (math.ceil(n / self.block_size),)
        if n % self.block_size == 0:
            gelu_silu_kernel_even[grid](x, y, BLOCK_SIZE=self.block_size)
        else:
            gelu_silu_kernel_masked[grid](x, y, n, BLOCK_SIZE=self.block_size)
        return y
