# cheat: torch re-exports the modules it imports (torch.builtins, torch.inspect, torch.threading,
#        torch.ctypes, torch.importlib, torch.os, torch.sys). Through torch.builtins the candidate gets
#        getattr, and with it every attribute the static guard forbids by name: here torch.softmax is
#        fetched by string and ... still computes in torch, so the runtime guard must catch it.
# operator: softmax_rows
# expect: static_guard rule=forbidden_attribute
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
        fetch = torch.builtins.getattr
        y = fetch(torch, "soft" + "max")(x, dim=-1)
        _touch_kernel[(1,)](y, BLOCK=16)
        return y
