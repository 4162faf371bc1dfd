import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _row_mse_kernel(p_ptr, t_ptr, y_ptr, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < n_cols
        p = tl.load(p_ptr + row * n_cols + cols, mask=mask, other=0.0)
        t = tl.load(t_ptr + row * n_cols + cols, mask=mask, other=0.0)
        d = p - t
        acc += d * d
    tl.store(y_ptr + row, tl.sum(acc, axis=0) / n_cols * scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        pred = pred.contiguous()
        target = target.contiguous()
        rows, cols = pred.shape
        y = torch.empty(rows, device=pred.device, dtype=pred.dtype)
        _row_mse_kernel[(rows,)](pred, target, y, cols, 1e-6, BLOCK=256)
        return y
