# cheat: predicts the harness's inputs by drawing from torch's default generator (a fixed seed in a fresh
#        process) in __init__, precomputes the answers, and only copies them out in forward
# operator: softmax_rows
# expect: mismatch rule=tolerance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        guess = torch.randn(64, 1000) if torch.cuda.is_available() else torch.randn(6, 37)
        self.register_buffer("answer", torch.softmax(guess, dim=-1), persistent=False)

    def forward(self, x):
        y = torch.empty_like(x)
        n = min(x.numel(), self.answer.numel())
        _copy_kernel[(triton.cdiv(y.numel(), 256),)](self.answer, y, n, BLOCK=256)
        return y
