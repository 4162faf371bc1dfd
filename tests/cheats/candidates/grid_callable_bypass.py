# cheat: the whole softmax runs in torch inside the launch grid callable; the kernel itself does nothing.
#        The runtime guard ignores aten ops while a Triton launch is in progress (LaunchRecorder.depth > 0),
#        and Triton evaluates a callable grid inside JITFunction.run, so the torch work is never logged.
# operator: softmax_rows
# expect: runtime_guard rule=non_triton_compute
# config: static_guard=false
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _touch_kernel(y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(y_ptr + offs, mask=offs < 0)


def _grid_that_computes(x, y):
    def grid(meta):
        y.copy_(torch.softmax(x, dim=-1))
        return (1,)

    return grid


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        _touch_kernel[_grid_that_computes(x, y)](y, BLOCK=16)
        return y
