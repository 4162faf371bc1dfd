# honest: tensor.chunk over rows with one launch per chunk, type hints, docstrings, a launcher function
# operator: elementwise_chain
from typing import Optional

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _swish_affine_kernel(
    x_ptr,
    weight_ptr,
    bias_ptr,
    y_ptr,
    n_elements,
    n_channels,
    BLOCK_SIZE: tl.constexpr,
):
    """y = x * sigmoid(x * w + b) + 0.5 * x, with w and b broadcast over the last dimension."""
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    w = tl.load(weight_ptr + offsets % n_channels, mask=mask, other=0.0)
    b = tl.load(bias_ptr + offsets % n_channels, mask=mask, other=0.0)
    y = x * tl.sigmoid(x * w + b) + 0.5 * x
    tl.store(y_ptr + offsets, y, mask=mask)


def swish_affine(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: Optional[torch.Tensor] = None
) -> torch.Tensor:
    """Launch the fused kernel on a contiguous tensor; writes into `out` when given."""
    if out is None:
        out = torch.empty_like(x)
    n = x.numel()
    BLOCK_SIZE = 64
    _swish_affine_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, weight, bias, out, n, x.shape[-1], BLOCK_SIZE=BLOCK_SIZE)
    return out


class ModelNew(nn.Module):
    """Fused elementwise chain, processed in two row chunks."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, channels))
        self.bias = nn.Parameter(torch.linspace(-0.25, 0.25, channels))
        self.num_chunks = 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        x2d = x.view(-1, x.shape[-1])
        out = torch.empty_like(x2d)
        # chunks along dim 0 of a contiguous tensor are contiguous themselves
        for x_part, out_part in zip(x2d.chunk(self.num_chunks, dim=0), out.chunk(self.num_chunks, dim=0)):
            swish_affine(x_part, self.weight, self.bias, out=out_part)
        return out.view(x.shape)
