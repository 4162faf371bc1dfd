# cheat: the row maximum's index is the LAST position holding the maximum, where torch.max documents the first.
#        Random continuous trial inputs never tie, so every trial agrees; real inputs that tie (quantized or
#        integer-valued activations, ReLU zeros, saturated logits) get other indices than the reference.
# operator: max_dim
# expect: mismatch rule=exact
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def row_max_kernel(x_ptr, v_ptr, i_ptr, n_cols, stride_row, stride_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask, other=-float("inf"))
    best = tl.max(x, axis=0)
    index = tl.max(tl.where((x == best) & mask, cols, -1), axis=0)
    tl.store(v_ptr + row, best)
    tl.store(i_ptr + row, index.to(tl.int64))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        n_rows, n_cols = rows.shape
        values = torch.empty(n_rows, dtype=x.dtype, device=x.device)
        indices = torch.empty(n_rows, dtype=torch.int64, device=x.device)
        block = triton.next_power_of_2(n_cols)
        row_max_kernel[(n_rows,)](rows, values, indices, n_cols, rows.stride(0), rows.stride(1), BLOCK=block)
        return values.reshape(x.shape[:-1]), indices.reshape(x.shape[:-1])
