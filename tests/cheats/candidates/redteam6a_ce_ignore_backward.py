# cheat: an LLM-style cross-entropy whose forward leaves targets at -100 (ignore_index) out of the sum and the count,
#        as F.cross_entropy does, but whose backward forgets them: every row gets (softmax - onehot) * dy / N with N
#        all the rows. Where a batch has padding (every padded language-model batch), the ignored rows get a
#        softmax-shaped gradient they should not have and the kept rows' gradient is scaled by N_kept / N.
# operator: rt6a_cross_entropy_train
# expect: mismatch rule=gradient
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


@triton.jit
def ce_backward_kernel(logits_ptr, target_ptr, dy_ptr, dlogits_ptr, n_rows, n_classes, stride_row,
                       BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_C)
    mask = cols < n_classes
    logits = tl.load(logits_ptr + row * stride_row + cols, mask=mask, other=-float("inf"))
    m = tl.max(logits, axis=0)
    e = tl.exp(logits - m)
    p = e / tl.sum(e, axis=0)
    tgt = tl.load(target_ptr + row)
    dy = tl.load(dy_ptr)
    grad = (p - tl.where(cols == tgt, 1.0, 0.0)) * dy / n_rows
    tl.store(dlogits_ptr + row * n_classes + cols, grad, mask=mask)


class CrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target):
        logits = logits.contiguous()
        target = target.contiguous()
        n_rows, n_classes = logits.shape
        losses = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
        kept = torch.empty(n_rows, device=logits.device, dtype=torch.float32)
        ce_row_kernel[(n_rows,)](logits, target, losses, kept, n_classes, logits.stride(0),
                                 BLOCK_C=triton.next_power_of_2(n_classes))
        out = torch.empty((), device=logits.device, dtype=logits.dtype)
        mean_kernel[(1,)](losses, kept, out, n_rows, BLOCK=64)
        ctx.save_for_backward(logits, target)
        return out

    @staticmethod
    def backward(ctx, dy):
        logits, target = ctx.saved_tensors
        n_rows, n_classes = logits.shape
        dlogits = torch.empty_like(logits)
        ce_backward_kernel[(n_rows,)](logits, target, dy.contiguous(), dlogits, n_rows, n_classes, logits.stride(0),
                                     BLOCK_C=triton.next_power_of_2(n_classes))
        return dlogits, None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return CrossEntropy.apply(logits, target)
