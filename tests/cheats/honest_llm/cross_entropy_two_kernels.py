# honest: per-row losses (log-sum-exp minus the target logit) and a second kernel for the mean, behind a
#   helper launcher cross_entropy(logits, target); int64 targets loaded in the kernel, those at -100
#   (F.cross_entropy's ignore_index) left out of the sum and the count
# operator: cross_entropy
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def ce_row_kernel(logits_ptr, target_ptr, loss_ptr, kept_ptr, n_classes, stride_row, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    mask = cols < n_classes
    logits = tl.load(logits_ptr + row * stride_row + cols, mask=mask, other=-float("inf"))
    m = tl.max(logits, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(logits - m), axis=0))
    tgt = tl.load(target_ptr + row)
    kept = tgt != -100
    tgt_logit = tl.load(logits_ptr + row * stride_row + tl.where(kept, tgt, 0))
    tl.store(loss_ptr + row, tl.where(kept, lse - tgt_logit, 0.0))
    tl.store(kept_ptr + row, kept.to(tl.float32))


@triton.jit
def mean_kernel(loss_ptr, kept_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    count = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(loss_ptr + start + offs, mask=start + offs < n, other=0.0)
        count += tl.load(kept_ptr + start + offs, mask=start + offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / tl.sum(count, axis=0))


def cross_entropy(logits, target):
    logits = logits.contiguous()
    target = target.contiguous()
    n_rows, n_classes = logits.shape
    losses = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
    kept = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
    ce_row_kernel[(n_rows,)](logits, target, losses, kept, n_classes, logits.stride(0),
                             BLOCK_C=triton.next_power_of_2(n_classes))
    out = torch.empty((), device=logits.device, dtype=logits.dtype)
    mean_kernel[(1,)](losses, kept, out, n_rows, BLOCK=64)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return cross_entropy(logits, target)
