# honest: reduce the middle dimension of a 3-D tensor through its three strides (no .contiguous()),
#   2-D grid over (batch, feature blocks), type hints
# operator: row_mean
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def mean_dim1_kernel(
    x_ptr,
    out_ptr,
    N,
    D,
    stride_xb,
    stride_xn,
    stride_xd,
    stride_ob,
    stride_od,
    BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_d = tl.program_id(1)
    offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = offs_d < D
    acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + pid_b * stride_xb + offs_n[:, None] * stride_xn + offs_d[None, :] * stride_xd
        tile = tl.load(ptrs, mask=(offs_n[:, None] < N) & d_mask[None, :], other=0.0)
        acc += tl.sum(tile, axis=0)
    tl.store(out_ptr + pid_b * stride_ob + offs_d * stride_od, acc / N, mask=d_mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, D = x.shape
        out = torch.empty((B, D), device=x.device, dtype=x.dtype)
        BLOCK_N, BLOCK_D = 8, 16
        grid = (B, triton.cdiv(D, BLOCK_D))
        mean_dim1_kernel[grid](
            x, out, N, D,
            x.stride(0), x.stride(1), x.stride(2),
            out.stride(0), out.stride(1),
            BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        )
        return out
