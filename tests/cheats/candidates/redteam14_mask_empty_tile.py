# cheat: none intended (an honest-looking bug): a tiled masked mean/variance that merges per-tile statistics with
#        Chan's parallel formula (tile count, tile mean = tile sum / tile count, tile M2; delta = tile mean - mean,
#        mean += delta * n_t / n, M2 += M2_t + delta^2 * n * n_t / n_new) without guarding a tile that holds NO valid
#        position: there 0/0 makes the tile mean NaN and delta * 0 keeps it NaN, so the row's variance is NaN. Real
#        masks are structured: a padded batch masks a contiguous tail (or, left-padded for generation, a head), so
#        every row shorter than cols - 16 has an all-masked tile and gets var = NaN. The checker draws the bool mask
#        only as the operator's make() does (i.i.d. valid with p=0.8, first column forced valid): a 16-wide tile is
#        all masked with probability 0.2^16 ~ 7e-12; no transformed trial touches a bool input (only floats and
#        int labels) and the wide/masked edge variants skip an operator whose mask cannot be widened.
# operator: rt10_masked_stats
# expect: incomplete_output rule=coverage
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def masked_stats_kernel(x_ptr, m_ptr, top_ptr, var_ptr, n_cols, sx0, sx1, sm0, sm1, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    top = tl.full([BLOCK], -1e9, tl.float32)
    n = 0.0
    mean = 0.0
    m2 = 0.0
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        inside = c < n_cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=inside, other=0.0).to(tl.float32)
        valid = (tl.load(m_ptr + row * sm0 + c * sm1, mask=inside, other=0) != 0) & inside
        top = tl.maximum(top, tl.where(valid, x, -1e9))
        n_t = tl.sum(valid.to(tl.float32), axis=0)
        mean_t = tl.sum(tl.where(valid, x, 0.0), axis=0) / n_t
        d = tl.where(valid, x - mean_t, 0.0)
        m2_t = tl.sum(d * d, axis=0)
        n_new = n + n_t
        delta = mean_t - mean
        mean = mean + delta * (n_t / n_new)
        m2 = m2 + m2_t + delta * delta * (n * n_t / n_new)
        n = n_new
    tl.store(top_ptr + row, tl.max(top, axis=0))
    tl.store(var_ptr + row, m2 / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, mask):
        rows, cols = x.shape
        m = mask.view(torch.int8)
        top = torch.empty(rows, dtype=x.dtype, device=x.device)
        var = torch.empty(rows, dtype=x.dtype, device=x.device)
        masked_stats_kernel[(rows,)](x, m, top, var, cols, x.stride(0), x.stride(1), m.stride(0), m.stride(1), BLOCK=16)
        return top, var
