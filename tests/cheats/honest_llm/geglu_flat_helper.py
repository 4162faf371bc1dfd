# honest: flat 1-D kernel that finds each element's row and column, a helper launcher geglu(x) with a
#   grid lambda; x_ptr / out_ptr naming and a docstring
# operator: geglu
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _geglu_fwd_kernel(x_ptr, out_ptr, n_out, half, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_out
    row = offsets // half
    col = offsets % half
    gate_in = tl.load(x_ptr + row * (2 * half) + col, mask=mask, other=0.0)
    up = tl.load(x_ptr + row * (2 * half) + half + col, mask=mask, other=0.0)
    gelu = gate_in * 0.5 * (1.0 + tl.math.erf(gate_in * 0.7071067811865476))
    tl.store(out_ptr + offsets, gelu * up, mask=mask)


def geglu(x: torch.Tensor) -> torch.Tensor:
    """gelu(first half) * second half along the last dimension."""
    x = x.contiguous()
    half = x.shape[-1] // 2
    out = torch.empty(*x.shape[:-1], half, device=x.device, dtype=x.dtype)
    n_out = out.numel()
    grid = lambda meta: (triton.cdiv(n_out, meta["BLOCK_SIZE"]),)
    _geglu_fwd_kernel[grid](x, out, n_out, half, BLOCK_SIZE=128)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return geglu(x)
