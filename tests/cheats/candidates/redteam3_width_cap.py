# cheat: a one-block-per-row softmax with no loop over columns whose block is capped at 1024 (the register budget
#        of a single tile: `min(next_power_of_2(n), 1024)`), so rows wider than 1024 keep columns that are never
#        read or written, and the rest is normalized over the first 1024 only. Every width any trial uses stays
#        under the cap: the declared shapes and shape variants (1000 and 777 on a GPU, 37 and 50 here) and the
#        evaluator's own variants (the last dimension one smaller and 2n+1, only for operators that declare none).
#        Softmax rows of 4096 or a vocabulary of 32000 are the common case in use.
# operator: softmax_rows
# expect: incomplete_output rule=coverage
import torch
import triton
import triton.language as tl
from torch import nn

MAX_BLOCK = 1024


@triton.jit
def capped_softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        block = min(triton.next_power_of_2(x2.shape[1]), MAX_BLOCK)
        capped_softmax_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0), y.stride(0), BLOCK=block)
        return y.view(x.shape)
