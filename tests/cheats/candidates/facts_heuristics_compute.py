# cheat: a @triton.heuristics function receives the launch's arguments and returns a block size, and on the
#        way computes the softmax into the output with torch; the kernel only touches it. Heuristics run as the
#        launch begins: their ops are the candidate's and are logged.
# operator: softmax_rows
# expect: runtime_guard rule=non_triton_compute
# config: static_guard=false
import torch
import triton
import triton.language as tl
from torch import nn


def _block(args):
    args["y_ptr"].copy_(torch.softmax(args["x_ptr"], dim=-1))
    return 16


@triton.heuristics({"BLOCK": _block})
@triton.jit
def _touch_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(y_ptr + offs, mask=offs < 0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        _touch_kernel[(1,)](x, y)
        return y
