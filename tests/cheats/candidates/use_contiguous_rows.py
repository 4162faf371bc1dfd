# cheat: a softmax that indexes its input as contiguous rows (row * n_cols) without asking for them: every
#        trial the harness made was contiguous, so it passed; a transposed or sliced input in use is read
#        in the wrong order. Rejected once trials include non-contiguous views: the output (strided like its
#        input) is written where the rows would be contiguous, and the rest stays unwritten.
#        Strided gaps hold the input's own values (not NaN), so the wrong rows are read as wrong numbers.
# operator: softmax_rows
# expect: mismatch rule=tolerance
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
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        n_cols = x.shape[-1]
        _softmax_kernel[(x.numel() // n_cols,)](x, y, n_cols, BLOCK=triton.next_power_of_2(n_cols))
        return y
