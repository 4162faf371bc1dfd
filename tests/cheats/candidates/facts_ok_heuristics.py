# cheat: none (a control). Row softmax with the block size and the warp count chosen by @triton.heuristics
#        from the row length (one block per row), launched one program per row.
# operator: softmax_rows
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn


@triton.heuristics(
    {
        "BLOCK_SIZE": lambda args: triton.next_power_of_2(args["n_cols"]),
        "num_warps": lambda args: 4 if args["n_cols"] <= 2048 else 8,
    }
)
@triton.jit
def _softmax_fwd_kernel(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        _softmax_fwd_kernel[(x2.shape[0],)](x2, y, x2.shape[1])
        return y.view(x.shape)
