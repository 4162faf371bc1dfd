# honest: tensor.chunk into halves whose strided views go to the kernel with their x.stride(0), output
#   from torch.empty
# operator: geglu
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def geglu_kernel(a_ptr, b_ptr, out_ptr, stride_a, stride_b, stride_out, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * stride_a + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + row * stride_b + cols, mask=mask, other=0.0)
    gelu_a = 0.5 * a * (1.0 + tl.math.erf(a * 0.7071067811865476))
    tl.store(out_ptr + row * stride_out + cols, gelu_a * b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        x2d = x.view(-1, x.shape[-1])
        a, b = x2d.chunk(2, dim=-1)  # views: unit column stride, row stride = full width
        n_rows, half = a.shape
        out = torch.empty((n_rows, half), device=x.device, dtype=x.dtype)
        BLOCK_SIZE = 16
        grid = (n_rows, triton.cdiv(half, BLOCK_SIZE))
        geglu_kernel[grid](a, b, out, a.stride(0), b.stride(0), out.stride(0), half, BLOCK_SIZE=BLOCK_SIZE)
        return out.view(*x.shape[:-1], half)
