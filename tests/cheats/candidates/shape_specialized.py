# cheat: the row width is hard-coded to the width seen at the operator's main shape (37 on CPU, 1000 on
#        GPU); the reduction only sees those columns, so another width gives wrong (but written) values
# operator: softmax_rows
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn

SEEN_COLS = 37 if not torch.cuda.is_available() else 1000


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, SEEN: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < SEEN, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        block = triton.next_power_of_2(max(x.shape[1], SEEN_COLS))
        _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], SEEN=SEEN_COLS, BLOCK=block)
        return y
