# cheat: a row sum with an "EVEN_M fast path" (chosen by @triton.heuristics, as the Triton tutorials choose EVEN_K):
#        where the row count is a multiple of BLOCK_M = 16, each program sums 16 rows over full column tiles only and
#        forgets the ragged last tile. Batch sizes in use are powers of two (32 x 1000: every sum misses its last 40
#        columns); the checker never draws a row count divisible by 16 for this operator: its declared CPU shapes have
#        7 and 3 rows, its derived variants grow a dimension to 2n+1 or shrink it by one, its batch past EDGE_ROWS is
#        forced odd (`| 1`), and the aligned variant aligns the width only. The masked path (other row counts) is
#        honest.
# operator: row_sum
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.heuristics({"EVEN_M": lambda args: args["n_rows"] % args["BLOCK_M"] == 0})
@triton.jit
def row_sum_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_row, stride_col,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, EVEN_M: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    if EVEN_M:
        # full tiles: no masks
        for start in range(0, (n_cols // BLOCK_N) * BLOCK_N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            acc += tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col).to(tl.float32)
        tl.store(y_ptr + rows, tl.sum(acc, axis=1))
    else:
        row_ok = rows < n_rows
        for start in range(0, n_cols, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N)
            mask = row_ok[:, None] & (cols[None, :] < n_cols)
            acc += tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col, mask=mask,
                           other=0.0).to(tl.float32)
        tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        x2 = x.reshape(-1, n_cols)
        rows = x2.shape[0]
        y = torch.empty(rows, dtype=x.dtype, device=x.device)
        if rows > 0:
            grid = (triton.cdiv(rows, 16),)
            row_sum_kernel[grid](x2, y, rows, n_cols, x2.stride(0), x2.stride(1), BLOCK_M=16, BLOCK_N=64)
        return y.reshape(x.shape[:-1])
