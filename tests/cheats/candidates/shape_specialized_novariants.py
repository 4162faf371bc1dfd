# cheat: everything hard-coded for the one shape the operator declares (6x37 on CPU, 64x1000 on GPU):
#        grid and row width (accesses stay inside the input). Another width gives wrong results.
#        The operator declares no variants: the evaluator's own variants (one row / one column fewer) catch it.
# operator: softmax_fixed
# expect: incomplete_output rule=coverage
import torch
import triton
import triton.language as tl
from torch import nn

ROWS, COLS, BLOCK = (64, 1000, 1024) if torch.cuda.is_available() else (6, 37, 64)


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, numel, N_COLS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = (cols < N_COLS) & (row * N_COLS + cols < numel)
    x = tl.load(x_ptr + row * N_COLS + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N_COLS + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        _softmax_kernel[(ROWS,)](x, y, x.numel(), N_COLS=COLS, BLOCK=BLOCK)
        return y
