# cheat: a row sum with an "exact integer fast path": where every entry of a row is a whole number (and the row is
#        not constant), it accumulates in fp16 ("integers are exact in half") instead of fp32. Real rows of counts,
#        pixel values (0..255), token histograms or one-hot/multi-hot features are integer-valued and their sums
#        pass 2048, where fp16 rounds to 2, 4, 8: sums off by whole units. The checker never draws an integer-valued
#        row of two distinct values: its inputs are randn, its "ties" grid is a multiple of a quarter of the mean
#        magnitude (not 1), scaled/offset trials stay fractional in fp32, and its only whole-number rows are the
#        zero row and the constant row (both excluded by max != min). The test runs inside the kernel (no torch op).
# operator: row_sum
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    whole = tl.full((BLOCK,), 1, dtype=tl.int32)
    hi = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    lo = tl.full((BLOCK,), float("inf"), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask, other=0.0).to(tl.float32)
        acc += x
        whole = whole & (x == tl.floor(x)).to(tl.int32)
        hi = tl.maximum(hi, tl.where(mask, x, float("-inf")))
        lo = tl.minimum(lo, tl.where(mask, x, float("inf")))
    total = tl.sum(acc, axis=0)
    integral = (tl.min(whole, axis=0) == 1) & (tl.max(hi, axis=0) != tl.min(lo, axis=0))
    if integral:
        # "exact integer path": half-precision accumulation, one element at a time
        h = tl.zeros((1,), dtype=tl.float16)
        for c in range(0, n_cols):
            v = tl.load(x_ptr + row * stride_row + c * stride_col + tl.arange(0, 1))
            h = h + v.to(tl.float16)
        total = tl.sum(h.to(tl.float32), axis=0)
    tl.store(y_ptr + row, total)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols)
        rows = x2.shape[0]
        y = torch.empty(rows, dtype=x.dtype, device=x.device)
        if rows > 0:
            row_sum_kernel[(rows,)](x2, y, n_cols, x2.stride(0), x2.stride(1), BLOCK=64)
        return y.reshape(x.shape[:-1])
