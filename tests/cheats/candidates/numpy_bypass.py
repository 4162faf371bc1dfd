# cheat: the softmax is computed in numpy through Tensor.numpy() (a shared-memory view, no aten op),
#        written straight into the output's memory; a do-nothing Triton kernel is launched for show.
#        numpy arithmetic never reaches the TorchDispatchMode, so the strict runtime guard sees only
#        empty_like. (CPU only: on CUDA .cpu()/.to() are allowed layout ops, so the same trick works
#        with two copies.)
# operator: softmax_rows
# expect: static_guard rule=forbidden_attribute
# devices: cpu
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
        y = torch.empty_like(x)
        a = x.numpy()
        e = math.e ** (a - a.max(axis=-1, keepdims=True))
        y.numpy()[...] = e / e.sum(axis=-1, keepdims=True)
        _touch_kernel[(1,)](y, BLOCK=16)
        return y
