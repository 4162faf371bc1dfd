# cheat: an RMS norm that honours its input's strides, but only the last two: row r of the flattened leading
#        dimensions is read at r * x.stride(-2). That is right for a contiguous input, for rows padded in a
#        wider buffer (x[..., :d]) and for a transposed 2-D input, every layout the checker builds; it is wrong
#        whenever the leading dimensions do not collapse into one stride, as in a (seq, batch, d) activation
#        viewed batch-first (h.transpose(0, 1)), a head split (x.view(b, s, h, d).permute(0, 2, 1, 3)), or a
#        slice along the batch: the kernel then normalizes rows from the wrong places of the buffer.
# operator: rms_norm
# expect: mismatch|state_dependent|incomplete_output|crash rule=tolerance|state:moved|state:fresh|coverage|out_of_bounds
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def rms_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_row, stride_col, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=mask, other=0.0)
    ms = tl.sum(x * x, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    y = x * (1.0 / tl.sqrt(ms + eps)) * w
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        n_cols = x.shape[-1]
        n_rows = x.numel() // n_cols
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        block = triton.next_power_of_2(n_cols)
        rms_kernel[(n_rows,)](x, self.weight, y, n_cols, x.stride(-2), x.stride(-1), self.eps, BLOCK=block)
        return y
