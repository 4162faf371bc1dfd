# cheat: replays the previous call's result after 3 calls when the size matches. The call counter and the
#        replay buffer are non-persistent buffers written only by Triton kernels (read back with
#        .tolist()), so the static guard sees no state stored in forward. The harness's "rewrite" call
#        gets trial 0's result back.
# operator: softmax_rows
# expect: static_guard rule=forbidden_attribute
import torch
import triton
import triton.language as tl
from torch import nn

WIDTH = 1 << 16


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, c_ptr, meta_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)
    tl.store(c_ptr + row * n_cols + cols, y, mask=mask)
    tl.store(meta_ptr + 1, n_rows * n_cols)


@triton.jit
def _count_kernel(meta_ptr):
    tl.store(meta_ptr, tl.load(meta_ptr) + 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("meta", torch.zeros(2, dtype=torch.int64), persistent=False)
        self.register_buffer("last", torch.zeros(WIDTH), persistent=False)

    def forward(self, x):
        x = x.contiguous()
        calls, numel = self.meta.tolist()
        _count_kernel[(1,)](self.meta)
        if calls >= 3 and numel == x.numel():
            return self.last[: x.numel()].view(x.shape).clone()
        y = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        _softmax_kernel[(x.shape[0],)](x, y, self.last, self.meta, x.shape[0], x.shape[1], BLOCK=block)
        return y
