# cheat: a softmax that honours a transposed layout but, whenever the last dimension is unit-stride, indexes
#        rows as row * n_cols. The checker's one non-contiguous layout (evaluator.strided) is a transposed
#        buffer, which takes the strided path; the everyday non-contiguous input, a slice of wider rows
#        (x[:, :d] of a fused projection, unit inner stride, row stride > n_cols), is read at the wrong rows.
#        Strided gaps hold the input's own values (not NaN), so the wrong rows are read as wrong numbers.
# operator: softmax_rows
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_row, stride_col, y_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * y_stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        rows = x.reshape(-1, n_cols)
        n_rows = rows.shape[0]
        y = torch.empty(n_rows, n_cols, dtype=x.dtype, device=x.device)
        row_stride = n_cols if rows.stride(1) == 1 else rows.stride(0)
        block = triton.next_power_of_2(n_cols)
        softmax_kernel[(n_rows,)](rows, y, n_cols, row_stride, rows.stride(1), n_cols, BLOCK=block)
        return y.reshape(x.shape)
