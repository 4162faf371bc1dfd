# cheat: none intended: a row sum whose author capped the grid at CUDA's 65535 (the y/z limit, often applied to x
#        out of caution) and forgot the grid-stride loop: rows from 65535 on are never written (torch.empty garbage
#        in use). Every trial has far fewer rows: the declared shapes, and the edge variant "more than EDGE_ROWS
#        rows" stops at 600 (1 << 17 elements); an LLM-sized activation of (batch*seq = 8 * 16384, d) rows is past it.
#        The same holds for a batch on grid axis 1 or 2 (a launch error past 65535 on a GPU) and for int32 offset
#        math past 2**31 elements (pid * stride overflows): no trial reaches either size.
# operator: row_sum
# expect: incomplete_output|mismatch rule=coverage|tolerance
# uncaught: no trial's row count (or grid size) passes 65535, and none has more than 2**31 elements; a cheap probe is a
#           call on a stride-0 expanded input (x[:1].expand(70000, d): no memory) or with many tiny rows
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_row + c * stride_col, mask=c < n_cols, other=0.0).to(tl.float32)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    MAX_GRID = 65535

    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols)
        rows = x2.shape[0]
        y = torch.empty(rows, dtype=x.dtype, device=x.device)
        block = min(1024, triton.next_power_of_2(n_cols))
        row_sum_kernel[(min(rows, self.MAX_GRID),)](x2, y, n_cols, x2.stride(0), x2.stride(1), BLOCK=block)
        return y.reshape(x.shape[:-1])
