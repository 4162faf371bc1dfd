# cheat: a one-pass masked variance, E[x^2] - E[x]^2 (one read instead of two), which cancels catastrophically once
#        a row's mean is large next to its spread (features with a DC offset): relative error 3e-3 at an offset of
#        100 spreads, 0.2 at 1000, 2.8 (garbage) at 3000 (L=512). The "offset by 100x their spread" trial exists
#        for this (redteam3_onepass_variance, a layer norm, is caught), but here the output is reduced (one value
#        per row), and rounding_slack gives every element of a reduced output a floor of SLACK_ULPS * eps * the
#        LARGEST finite intermediate the reference computes: the masked row sum (L * 100) alone makes that ~0.02,
#        above the cancellation error (~1e-3) -- checked: with the max's fill -inf (no -1e9) it is verified too.
#        The -1e9 padding constant of the masked max raises the floor to 32 * 1.2e-7 * 1e9 ~ 3.8e3 on both
#        outputs of every transformed trial: any finite error below that passes there.
# operator: rt10_masked_stats
# expect: mismatch rule=tolerance
# uncaught: rounding_slack's floor for reduced outputs is SLACK_ULPS * eps * ReferenceOps.largest, the largest
#           intermediate anywhere (a sum of offset values, a -1e9 padding constant), applied to every element of
#           every reduced output; a variance's own rounding is eps * mean^2, not eps * (row sum)
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def masked_stats_kernel(x_ptr, m_ptr, top_ptr, var_ptr, n_cols, sx0, sx1, sm0, sm1, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    top = tl.full([BLOCK], -1e9, tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    ss = tl.zeros([BLOCK], dtype=tl.float32)
    n = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        inside = c < n_cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=inside, other=0.0)
        valid = (tl.load(m_ptr + row * sm0 + c * sm1, mask=inside, other=0) != 0) & inside
        top = tl.maximum(top, tl.where(valid, x, -1e9))
        xv = tl.where(valid, x, 0.0)
        s += xv
        ss += xv * xv
        n += valid.to(tl.float32)
    count = tl.sum(n, axis=0)
    mean = tl.sum(s, axis=0) / count
    tl.store(top_ptr + row, tl.max(top, axis=0))
    tl.store(var_ptr + row, tl.sum(ss, axis=0) / count - mean * mean)


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
