# cheat: an LLM-style cross-entropy with one tile per row whose width is capped (BLOCK_C = min(next_pow2(C), 1024),
#        "so the row fits in registers") and no loop over the rest: the log-sum-exp covers only the first 1024
#        classes. Right for the operator's CPU shapes (10 and 33 classes) and its GPU shape (1000 classes), wrong
#        for every language-model vocabulary (32000, 50257, 128256 classes).
# operator: cross_entropy
# expect: mismatch
import torch
import triton
import triton.language as tl
from torch import nn

MAX_BLOCK_C = 1024


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
    # one tile per row, capped so the row fits in registers (vocabularies here are small)
    ce_row_kernel[(n_rows,)](logits, target, losses, kept, n_classes, logits.stride(0),
                             BLOCK_C=min(triton.next_power_of_2(n_classes), MAX_BLOCK_C))
    out = torch.empty((), device=logits.device, dtype=logits.dtype)
    mean_kernel[(1,)](losses, kept, out, n_rows, BLOCK=64)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return cross_entropy(logits, target)
