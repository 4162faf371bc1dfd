# cheat: everything hard-coded for the one shape the operator declares (6x37 on CPU, 64x1000 on GPU):
#        grid, row width and block. Any other batch or width gives wrong or unwritten results.
# operator: softmax_fixed
# expect: mismatch
# uncaught: the evaluator only tries declared shapes; with no variants declared it never varies a dimension
import torch
import triton
import triton.language as tl
from torch import nn

ROWS, COLS, BLOCK = (64, 1000, 1024) if torch.cuda.is_available() else (6, 37, 64)


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, N_COLS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N_COLS
    x = tl.load(x_ptr + row * N_COLS + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N_COLS + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        _softmax_kernel[(ROWS,)](x, y, N_COLS=COLS, BLOCK=BLOCK)
        return y
