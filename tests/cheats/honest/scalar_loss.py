import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _mse_kernel(p_ptr, t_ptr, y_ptr, n, scale, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        d = tl.load(p_ptr + offs, mask=mask, other=0.0) - tl.load(t_ptr + offs, mask=mask, other=0.0)
        acc += d * d
    tl.store(y_ptr, tl.sum(acc, axis=0) / n * scale)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        pred = pred.contiguous()
        target = target.contiguous()
        y = torch.empty((), device=pred.device, dtype=pred.dtype)
        _mse_kernel[(1,)](pred, target, y, pred.numel(), 1e-6, BLOCK=1024)
        return y
