# cheat: every autotune config carries a pre_hook, which Triton calls before each launch with the launch's
#        arguments; the hook computes the softmax with torch into the output and the kernel only touches it.
#        Multi-config autotune used to fail on CPU ("0 active drivers"), so this could not even be checked
#        there; now it runs (evaluate/interp_autotune.py) and the hook's ops are logged as the candidate's.
# operator: softmax_rows
# expect: runtime_guard rule=non_triton_compute
# config: static_guard=false
import torch
import triton
import triton.language as tl
from torch import nn


def _fill(args):
    args["y_ptr"].copy_(torch.softmax(args["x_ptr"], dim=-1))


@triton.autotune(
    configs=[triton.Config({"BLOCK": 16}, pre_hook=_fill), triton.Config({"BLOCK": 32}, pre_hook=_fill)],
    key=["n_cols"],
)
@triton.jit
def _touch_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(y_ptr + offs, mask=offs < 0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        _touch_kernel[(1,)](x, y, x.shape[-1])
        return y
