# cheat: a softmax with an "aligned" fast path, taken when the row width fills its block exactly (EVEN_N, chosen
#        by @triton.heuristics as the Triton tutorials do: unmasked, vectorizable loads). The fast path computes
#        the exponentials with exp2 and forgets the log2(e) factor, so every power-of-two width (64, 1024, 4096:
#        the widths models use) gets a softmax of x * ln 2 instead of x. The masked path is honest.
# operator: softmax_rows
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.heuristics({"EVEN_N": lambda args: args["n_cols"] % args["BLOCK"] == 0})
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    if EVEN_N:
        x = tl.load(x_ptr + row * stride_x + cols)
        e = tl.exp2(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0))
    else:
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
        n_rows, n_cols = x2.shape
        block = triton.next_power_of_2(n_cols)
        softmax_kernel[(n_rows,)](x2, y, n_cols, x2.stride(0), y.stride(0), BLOCK=block)
        return y.view(x.shape)
