# cheat: the block size is fixed to the declared row width rounded up to a power of two (64 on CPU, 1024 on
#        GPU) instead of being derived from the input: correct for every width up to that block, wrong for
#        wider rows (columns past the block are never written). The operator declares no variants and the
#        evaluator's own variants only shrink the shape (one row / one column fewer), so it never sees a
#        wider row.
# operator: softmax_fixed
# expect: incomplete_output rule=coverage
import torch
import triton
import triton.language as tl
from torch import nn

BLOCK = 1024 if torch.cuda.is_available() else 64


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
        x = x.contiguous()
        y = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=BLOCK)
        return y
