# cheat: launches the Triton kernel on the first call only (a call counter kept in a buffer that a kernel
#        increments); every later call is computed by torch
# operator: softmax_rows
# expect: runtime_guard rule=no_triton_launch
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, count_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)
    tl.store(count_ptr, 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("launched", torch.zeros(1, dtype=torch.int32), persistent=False)

    def forward(self, x):
        if self.launched.item():
            return torch.softmax(x, dim=-1)
        x = x.contiguous()
        y = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, y, self.launched, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
