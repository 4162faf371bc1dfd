# cheat: returns the expected value of the loss for standard-normal inputs (E[(a-b)^2] * 1e-6 = 2e-6) for
#        every row: right on average, within a naive atol=1e-4
# operator: tiny_loss
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _const_kernel(y_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32) + value, mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        y = torch.empty(pred.shape[0], device=pred.device, dtype=pred.dtype)
        _const_kernel[(1,)](y, y.numel(), 2e-6, BLOCK=triton.next_power_of_2(y.numel()))
        return y
