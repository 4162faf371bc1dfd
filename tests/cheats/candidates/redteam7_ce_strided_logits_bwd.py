# cheat: an LLM-style cross-entropy whose forward reads the logits through their strides (no copy of a vocabulary
#        padded to a multiple of 64 and sliced, logits[..., :V], or of a transposed projection), and whose backward
#        reads the saved logits as contiguous rows (logits_ptr + row * n_classes + col, the usual slip of passing
#        the width as the row stride). Loss and contiguous-logit gradients are right; on padded or transposed
#        logits every row's gradient is the softmax of the wrong elements.
# operator: rt6a_cross_entropy_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def ce_row_kernel(logits_ptr, target_ptr, loss_ptr, kept_ptr, n_classes, stride_row, stride_col,
                  BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    mask = cols < n_classes
    logits = tl.load(logits_ptr + row * stride_row + cols * stride_col, mask=mask, other=-float("inf"))
    m = tl.max(logits, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(logits - m), axis=0))
    tgt = tl.load(target_ptr + row)
    kept = tgt != -100
    tgt_logit = tl.load(logits_ptr + row * stride_row + tl.where(kept, tgt, 0) * stride_col)
    tl.store(loss_ptr + row, tl.where(kept, lse - tgt_logit, 0.0))
    tl.store(kept_ptr + row, kept.to(tl.float32))


@triton.jit
def mean_kernel(loss_ptr, kept_ptr, out_ptr, count_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    count = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        acc += tl.load(loss_ptr + start + offs, mask=start + offs < n, other=0.0)
        count += tl.load(kept_ptr + start + offs, mask=start + offs < n, other=0.0)
    total = tl.sum(count, axis=0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / total)
    tl.store(count_ptr, total)


@triton.jit
def ce_backward_kernel(logits_ptr, target_ptr, dy_ptr, count_ptr, dlogits_ptr, n_classes, BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    mask = cols < n_classes
    logits = tl.load(logits_ptr + row * n_classes + cols, mask=mask, other=-float("inf"))
    m = tl.max(logits, axis=0)
    e = tl.exp(logits - m)
    p = e / tl.sum(e, axis=0)
    tgt = tl.load(target_ptr + row)
    kept = tgt != -100
    dy = tl.load(dy_ptr)
    count = tl.load(count_ptr)
    grad = (p - tl.where(cols == tgt, 1.0, 0.0)) * dy / count
    grad = tl.where(kept, grad, 0.0)
    tl.store(dlogits_ptr + row * n_classes + cols, grad, mask=mask)


class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target):
        target = target.contiguous()
        n_rows, n_classes = logits.shape
        losses = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
        kept = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
        ce_row_kernel[(n_rows,)](logits, target, losses, kept, n_classes, logits.stride(0), logits.stride(1),
                                 BLOCK_C=triton.next_power_of_2(n_classes))
        out = torch.empty((), device=logits.device, dtype=logits.dtype)
        count = torch.empty((), device=logits.device, dtype=torch.float32)
        mean_kernel[(1,)](losses, kept, out, count, n_rows, BLOCK=64)
        ctx.save_for_backward(logits, target, count)
        return out

    @staticmethod
    def backward(ctx, dy):
        logits, target, count = ctx.saved_tensors
        n_rows, n_classes = logits.shape
        dlogits = torch.empty((n_rows, n_classes), device=logits.device, dtype=logits.dtype)
        ce_backward_kernel[(n_rows,)](logits, target, dy.contiguous(), count, dlogits, n_classes,
                                     BLOCK_C=triton.next_power_of_2(n_classes))
        return dlogits, None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return CrossEntropy.apply(logits, target)
