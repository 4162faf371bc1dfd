# attack: with the static guard switched off (standing in for any hole in it), kills the evaluating parent
import os

import triton
import triton.language as tl
from torch import nn


@triton.jit
def _touch_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(x_ptr + offs, mask=offs < 0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        os.kill(os.getppid(), 9)
        _touch_kernel[(1,)](x, BLOCK=16)
        return x.clone()
