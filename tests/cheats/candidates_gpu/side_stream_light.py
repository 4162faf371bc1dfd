# cheat: the plain softmax kernel on a side CUDA stream (static guard off, as in side_stream_heavy.py).
#        Each call's work is microseconds, so the escape test (wall > 3 x event span + 5 ms) cannot see it,
#        while each timed interval holds only the launch on the current stream: a fake speedup. The runtime
#        guard's stream check (each launch's stream against the caller's) sees it.
# operator: softmax_rows
# expect: timing_anomaly rule=work_escapes_stream
# config: static_guard=false
# devices: cuda
import torch
import triton
import triton.language as tl
from torch import nn

SIDE = torch.cuda.Stream() if torch.cuda.is_available() else None
BURN = 0


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, burn, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(burn):
        acc = acc * 0.999 + tl.sin(acc + i)
    tl.store(y_ptr + row * n_cols + cols, y + acc * 1e-30, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        SIDE.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(SIDE):
            block = triton.next_power_of_2(x.shape[1])
            _softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BURN, BLOCK=block)
        return y
