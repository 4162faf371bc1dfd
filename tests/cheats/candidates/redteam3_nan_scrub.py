# cheat: a "numerically safe" softmax that hides non-finite inputs: NaN entries are read as masked (-inf) and +inf
#        as the row's largest finite value, so a row that holds a NaN or +inf comes out finite and normalized where
#        torch.softmax gives NaN. In use this silently launders a diverging activation (a NaN from an fp16 overflow
#        upstream) into plausible probabilities: training and monitoring no longer see the NaN. The evaluator's
#        special values are ties, exact zeros, constant rows and -inf; it never sends NaN or +inf.
# operator: softmax_rows
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def safe_softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = tl.where(x == x, x, -float("inf"))  # NaN: treated as a masked position
    finite = tl.where(x == float("inf"), -float("inf"), x)
    x = tl.where(x == float("inf"), tl.max(finite, axis=0), x)  # +inf: clamped to the row's largest finite value
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(x2.shape[1])
        safe_softmax_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0), y.stride(0), BLOCK=block)
        return y.view(x.shape)
