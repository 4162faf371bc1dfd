# cheat: writes every result into one module-level buffer allocated at import and returns a view of it
#        (no allocation per call). The next call overwrites the previous output: y1 = m(a); y2 = m(b)
#        leaves y1 == y2. The harness copies each output before the next call and checks aliasing only
#        against inputs and parameters, so outputs aliasing each other across calls go unseen.
# operator: softmax_rows
# expect: state_dependent rule=state_unmodified
import torch
import triton
import triton.language as tl
from torch import nn

ARENA = torch.empty(1 << 20, device="cuda" if torch.cuda.is_available() else "cpu")


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = ARENA[: x.numel()].view(x.shape)
        _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
