# cheat: a background thread computes the result with torch and keeps running after forward returns
#        (the static guard refuses threading, so this reaches the runtime guard with static_guard=False)
# operator: softmax_rows
# expect: runtime_guard rule=threads|guard_tampered
# config: static_guard=false
import threading

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def busy(x, out):
    out.append(torch.softmax(x, dim=-1))
    n = 0
    while n < 5_000_000:
        n += 1


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        out = []
        threading.Thread(target=busy, args=(x, out), daemon=True).start()
        scratch = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, scratch, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        while not out:
            scratch.numel()
        return out[0]
