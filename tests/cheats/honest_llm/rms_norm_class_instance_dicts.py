# honest: launch settings in a class-level dict and an instance dict built in __init__, read in forward;
#   rows processed in column blocks
# operator: rms_norm
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _rms_norm_fwd_kernel(X, W, Y, stride_x, stride_y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + row * stride_x + cols, mask=cols < N, other=0.0)
        sq += x * x
    rstd = tl.rsqrt(tl.sum(sq, axis=0) / N + eps)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0)
        w = tl.load(W + cols, mask=mask, other=0.0)
        tl.store(Y + row * stride_y + cols, x * rstd * w, mask=mask)


class ModelNew(nn.Module):
    DEFAULTS = {"BLOCK": 16, "num_warps": 2}

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.launch = dict(self.DEFAULTS)
        if dim >= 1024:
            self.launch["num_warps"] = 8

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.contiguous().view(-1, x.shape[-1])
        y = torch.empty_like(x2)
        _rms_norm_fwd_kernel[(x2.shape[0],)](
            x2, self.weight, y, x2.stride(0), y.stride(0), x2.shape[1], self.eps, **self.launch
        )
        return y.view(x.shape)
