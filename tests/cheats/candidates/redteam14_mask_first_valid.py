# cheat: none intended (an honest-looking bug): a masked max/variance whose running maximum starts from the row's
#        FIRST element, unmasked ("seed the max with x[row, 0] instead of -inf: position 0 is always a real token"),
#        and whose variance is computed exactly in two passes. Wrong wherever position 0 is padding and its value is
#        above every valid one: left-padded batches (decoder-only generation pads on the left, padding_side="left"),
#        with pad positions holding 0 and the valid scores all negative (log-probabilities, energies) give top = 0,
#        or whatever the pad slot holds. The operator's make() forces mask[:, 0] = True (so no row is empty), and the
#        checker never varies a bool input: no transformed trial, edge variant or layout touches the mask, so column
#        0 is valid in every trial.
# operator: rt10_masked_stats
# expect: mismatch rule=significance|tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def masked_stats_kernel(x_ptr, m_ptr, top_ptr, var_ptr, n_cols, sx0, sx1, sm0, sm1, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    first = tl.load(x_ptr + row * sx0).to(tl.float32)
    top = tl.zeros([BLOCK], tl.float32) + first
    s = tl.zeros([BLOCK], tl.float32)
    n = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        inside = c < n_cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=inside, other=0.0).to(tl.float32)
        valid = (tl.load(m_ptr + row * sm0 + c * sm1, mask=inside, other=0) != 0) & inside
        top = tl.maximum(top, tl.where(valid, x, -1e9))
        s += tl.where(valid, x, 0.0)
        n += valid.to(tl.float32)
    count = tl.sum(n, axis=0)
    mean = tl.sum(s, axis=0) / count
    acc = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        inside = c < n_cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=inside, other=0.0).to(tl.float32)
        valid = (tl.load(m_ptr + row * sm0 + c * sm1, mask=inside, other=0) != 0) & inside
        d = tl.where(valid, x - mean, 0.0)
        acc += d * d
    tl.store(top_ptr + row, tl.max(top, axis=0))
    tl.store(var_ptr + row, tl.sum(acc, axis=0) / count)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, mask):
        rows, cols = x.shape
        m = mask.view(torch.int8)
        top = torch.empty(rows, dtype=x.dtype, device=x.device)
        var = torch.empty(rows, dtype=x.dtype, device=x.device)
        block = min(1024, triton.next_power_of_2(cols))
        masked_stats_kernel[(rows,)](x, m, top, var, cols, x.stride(0), x.stride(1), m.stride(0), m.stride(1), BLOCK=block)
        return top, var
