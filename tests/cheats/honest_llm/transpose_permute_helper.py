# honest: a generic strided copy kernel behind a helper launcher; the transpose is expressed as a
#   .permute view whose strides the kernel follows; triton.cdiv grid, output from torch.empty
# operator: transpose
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def strided_copy_3d_kernel(src_ptr, dst_ptr, n_elements, D1, D2, s0, s1, s2, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    # unravel the contiguous destination index into (i0, i1, i2)
    i2 = offsets % D2
    i1 = (offsets // D2) % D1
    i0 = offsets // (D1 * D2)
    vals = tl.load(src_ptr + i0 * s0 + i1 * s1 + i2 * s2, mask=mask)
    tl.store(dst_ptr + offsets, vals, mask=mask)


def contiguous_copy(view: torch.Tensor) -> torch.Tensor:
    """Materialize a 3-D (possibly permuted) view into a new contiguous tensor with a Triton kernel."""
    D0, D1, D2 = view.shape
    out = torch.empty((D0, D1, D2), device=view.device, dtype=view.dtype)
    n = out.numel()
    BLOCK_SIZE = 256
    strided_copy_3d_kernel[(triton.cdiv(n, BLOCK_SIZE),)](
        view, out, n, D1, D2, view.stride(0), view.stride(1), view.stride(2), BLOCK_SIZE=BLOCK_SIZE
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return contiguous_copy(x.permute(0, 2, 1))
