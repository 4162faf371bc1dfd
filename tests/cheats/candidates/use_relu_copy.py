# cheat: a plain copy kernel offered as ReLU. The operator's inputs are non-negative (torch.rand), where ReLU
#        is the identity, so every trial drawn from them passes (with only a weak-check warning); any
#        negative input in use comes back unclamped. Rejected once trials include inputs with flipped signs.
# operator: relu_nonneg
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        flat = x.contiguous()
        y = torch.empty_like(flat)
        _relu_kernel[(triton.cdiv(flat.numel(), 256),)](flat, y, flat.numel(), BLOCK=256)
        return y
