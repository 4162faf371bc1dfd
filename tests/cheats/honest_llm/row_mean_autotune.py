# honest: multi-config @triton.autotune over BLOCK_N/BLOCK_D (key on N and D) with a grid lambda over meta
# operator: row_mean
import torch
import triton
import triton.language as tl
from torch import nn


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_N": 4, "BLOCK_D": 8}, num_warps=1),
        triton.Config({"BLOCK_N": 16, "BLOCK_D": 16}, num_warps=2),
    ],
    key=["N", "D"],
)
@triton.jit
def _mean_over_n_kernel(x_ptr, y_ptr, N, D, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    b = tl.program_id(0)
    d_offs = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    total = tl.zeros((BLOCK_D,), dtype=tl.float32)
    base = x_ptr + b * N * D
    for start in range(0, N, BLOCK_N):
        n_offs = start + tl.arange(0, BLOCK_N)
        m = (n_offs[:, None] < N) & (d_offs[None, :] < D)
        total += tl.sum(tl.load(base + n_offs[:, None] * D + d_offs[None, :], mask=m, other=0.0), axis=0)
    tl.store(y_ptr + b * D + d_offs, total / N, mask=d_offs < D)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        B, N, D = x.shape
        y = torch.empty(B, D, device=x.device, dtype=x.dtype)
        grid = lambda meta: (B, triton.cdiv(D, meta["BLOCK_D"]))
        _mean_over_n_kernel[grid](x, y, N, D)
        return y
