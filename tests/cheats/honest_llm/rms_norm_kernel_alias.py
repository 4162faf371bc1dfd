# honest: the kernel kept as an alias on the module (self.kernel = _rmsnorm_fwd in __init__) and launched as
#   self.kernel[grid](...); compiler hints (tl.multiple_of, tl.max_contiguous) and tl.static_range
# operator: rms_norm
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _rmsnorm_fwd(X, W, Y, stride, N, eps, BLOCK: tl.constexpr, NUM_BLOCKS: tl.constexpr):
    row = tl.program_id(0)
    x_row = X + row * stride
    y_row = Y + row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for b in tl.static_range(NUM_BLOCKS):
        cols = b * BLOCK + tl.arange(0, BLOCK)
        cols = tl.max_contiguous(tl.multiple_of(cols, BLOCK), BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    rrms = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / N + eps)
    for b in tl.static_range(NUM_BLOCKS):
        cols = b * BLOCK + tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, x * rrms * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.kernel = _rmsnorm_fwd
        self.block = min(triton.next_power_of_2(dim), 32)

    def forward(self, x):
        x_2d = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x_2d)
        n_rows, n_cols = x_2d.shape
        self.kernel[(n_rows,)](
            x_2d, self.weight, y, x_2d.stride(0), n_cols, self.eps,
            BLOCK=self.block, NUM_BLOCKS=triton.cdiv(n_cols, self.block),
        )
        return y.view_as(x)
