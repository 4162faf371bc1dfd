# honest: two-stage reduction (partial sums, then a finishing kernel) behind a helper launcher mse_loss()
#   called from forward; triton.cdiv and triton.next_power_of_2
# operator: scalar_loss
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _partial_sq_sum_kernel(x_ptr, y_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    d = tl.load(x_ptr + offs, mask=mask, other=0.0) - tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(d * d, axis=0))


@triton.jit
def _finish_kernel(partial_ptr, out_ptr, num_partials, inv_n_scaled, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    vals = tl.load(partial_ptr + offs, mask=offs < num_partials, other=0.0)
    tl.store(out_ptr, tl.sum(vals, axis=0) * inv_n_scaled)


def mse_loss(pred: torch.Tensor, target: torch.Tensor, scale: float = 1e-6) -> torch.Tensor:
    pred = pred.contiguous().view(-1)
    target = target.contiguous().view(-1)
    n = pred.numel()
    BLOCK = 128
    num_blocks = triton.cdiv(n, BLOCK)
    partials = torch.empty(num_blocks, device=pred.device, dtype=torch.float32)
    _partial_sq_sum_kernel[(num_blocks,)](pred, target, partials, n, BLOCK=BLOCK)
    out = torch.empty((), device=pred.device, dtype=pred.dtype)
    _finish_kernel[(1,)](partials, out, num_blocks, scale / n, BLOCK=triton.next_power_of_2(num_blocks))
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return mse_loss(pred, target)
