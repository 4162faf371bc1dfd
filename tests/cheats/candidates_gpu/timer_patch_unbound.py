# control: patches CUDA event timing and the wall clock at import (static guard off). The
#          worker binds its timer functions before candidate code runs, so the verdict and the measured
#          time must be those of the honest kernel underneath.
# cheat: timer patching after the harness bound its timer
# operator: softmax_rows
# expect: verified
# config: static_guard=false
# devices: cuda
import time

import torch
import triton
import triton.language as tl
from torch import nn

torch.cuda.Event.elapsed_time = lambda self, end: 1e-6
time.perf_counter = lambda: 0.0


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
