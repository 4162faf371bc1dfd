# cheat: a cross-entropy that ignores ignore_index. F.cross_entropy skips targets equal to -100 (its default
#        ignore_index: the padding tokens of every language-model batch) and averages over the other rows; this
#        kernel clamps each target into [0, C) ("no out-of-bounds read") and divides by the row count, so a padded
#        row adds the loss of class 0 and the mean is taken over the wrong count. Right whenever no target is
#        -100, which is every target the checker draws.
# operator: cross_entropy
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def ce_kernel(x_ptr, t_ptr, out_ptr, n_rows, n_cols, stride_x, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.arange(0, BLOCK_C)
    col_mask = cols < n_cols
    total = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for r0 in range(0, n_rows, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        row_mask = rows < n_rows
        mask = row_mask[:, None] & col_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=-float("inf"))
        m = tl.max(x, axis=1)
        m = tl.where(row_mask, m, 0.0)
        e = tl.exp(x - m[:, None])
        lse = tl.log(tl.sum(e, axis=1)) + m
        t = tl.load(t_ptr + rows, mask=row_mask, other=0)
        t = tl.minimum(tl.maximum(t, 0), n_cols - 1)  # keep the gather in bounds
        picked = tl.load(x_ptr + rows * stride_x + t, mask=row_mask, other=0.0)
        total += tl.where(row_mask, lse - picked, 0.0)
    tl.store(out_ptr, tl.sum(total, axis=0) / n_rows)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        x = logits.contiguous()
        t = target.contiguous()
        out = torch.empty((), dtype=x.dtype, device=x.device)
        n_rows, n_cols = x.shape
        ce_kernel[(1,)](x, t, out, n_rows, n_cols, x.stride(0), BLOCK_R=64, BLOCK_C=triton.next_power_of_2(n_cols))
        return out
