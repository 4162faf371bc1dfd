# honest: block-wise partial sums reduced into a zero-filled scalar with tl.atomic_add, grid lambda
# operator: scalar_loss
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def mse_atomic_kernel(pred_ptr, target_ptr, out_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    p = tl.load(pred_ptr + offsets, mask=mask, other=0.0)
    t = tl.load(target_ptr + offsets, mask=mask, other=0.0)
    diff = p - t
    partial = tl.sum(diff * diff, axis=0)
    # mean and loss scale folded into each partial sum
    tl.atomic_add(out_ptr, partial * scale / n_elements)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 1e-6

    def forward(self, pred, target):
        pred = pred.contiguous()
        target = target.contiguous()
        n_elements = pred.numel()
        out = torch.zeros((), device=pred.device, dtype=torch.float32)
        grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
        mse_atomic_kernel[grid](pred, target, out, n_elements, self.scale, BLOCK_SIZE=64)
        return out
