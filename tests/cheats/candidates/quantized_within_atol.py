# cheat: stores the softmax rounded to a fixed grid of 1e-4 (a 14-bit fixed-point output: what an fp16 or
#        int16 downcast of small values does, only worse). The absolute error is <= 5e-5 < atol, so the
#        check passes, yet outputs below 1e-4 come back as 0 or 1e-4 (relative error up to 100%); at the
#        GPU shape (1000 columns, outputs ~1e-3) every value keeps one significant digit, and the
#        trivial-answer probe's scaled atol (1% of the mean output, 1e-5) already rejects it there.
# operator: softmax_rows
# expect: mismatch rule=relative_rms|tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    y = tl.floor(y * 10000.0 + 0.5) / 10000.0
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
