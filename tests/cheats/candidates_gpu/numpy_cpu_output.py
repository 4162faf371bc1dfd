# cheat: on CUDA, copies the input to the host (aten _to_copy with the same dtype: an allowed layout op),
#        computes the softmax in numpy and returns a CPU tensor wrapped around the numpy result; a Triton
#        kernel launches on the GPU for show. The output's device is never checked (outputs are copied
#        to the CPU before comparison) and numpy work is invisible to the aten-level runtime guard.
# operator: softmax_rows
# expect: static_guard rule=forbidden_attribute
# devices: cuda
import math

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _touch_kernel(y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(y_ptr + offs, mask=offs < 0)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        a = x.cpu().numpy()
        e = math.e ** (a - a.max(axis=-1, keepdims=True))
        y = torch.from_numpy(e / e.sum(axis=-1, keepdims=True))
        _touch_kernel[(1,)](x, BLOCK=16)
        return y
