# cheat: a string annotation is code that an allowed module evaluates: typing.get_type_hints runs
#        "__import__('numpy').asarray" in the candidate's globals, handing back numpy without any import the
#        denylist guard could see. The softmax is computed in numpy on the tensors' shared memory (no aten
#        op). With static_guard=false it is verified under strict on CPU; the same string could run any code.
# operator: softmax_rows
# expect: static_guard rule=syntax_allowlist
# devices: cpu
import math
import typing

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _touch_kernel(y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.load(y_ptr + offs, mask=offs < 0)


def _hint(view: "__import__('numpy').asarray") -> None:
    pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        view = typing.get_type_hints(_hint)["view"]
        y = torch.empty_like(x)
        a = view(x)
        e = math.e ** (a - a.max(axis=-1, keepdims=True))
        view(y)[...] = e / e.sum(axis=-1, keepdims=True)
        _touch_kernel[(1,)](y, BLOCK=16)
        return y
