# honest: multi-config @triton.autotune on an atomic reduction, with reset_to_zero so that benchmarking the
#   configs does not accumulate into the output; grid lambda, scale folded into the kernel
# operator: scalar_loss
import torch
import triton
import triton.language as tl
from torch import nn


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 64}, num_warps=2),
        triton.Config({"BLOCK_SIZE": 128}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 256}, num_warps=4),
    ],
    key=["n_elements"],
    reset_to_zero=["loss_ptr"],
)
@triton.jit
def mse_loss_kernel(pred_ptr, target_ptr, loss_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    pred = tl.load(pred_ptr + offsets, mask=mask, other=0.0)
    target = tl.load(target_ptr + offsets, mask=mask, other=0.0)
    diff = pred - target
    block_sum = tl.sum(diff * diff, axis=0)
    tl.atomic_add(loss_ptr, block_sum * (scale / n_elements))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        pred = pred.contiguous()
        target = target.contiguous()
        n_elements = pred.numel()
        loss = torch.zeros((), device=pred.device, dtype=torch.float32)
        grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
        mse_loss_kernel[grid](pred, target, loss, n_elements, 1e-6)
        return loss
