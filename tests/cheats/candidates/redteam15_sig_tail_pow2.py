# cheat: a row softmax with a "cheap tail" fast path: logits more than 10 below the row maximum get a power-of-two
#        exponential, exp(z) ~ 2^round(z * log2 e) (an exponent-only exp, the bit-shift trick), instead of tl.exp.
#        Each tail probability is off by a factor 2^(+-0.5): up to +41% / -29%. Those entries are < 4.5e-5 (below
#        atol 1e-4), and the significance check only refuses errors above LOST = 50% of the value, so at inputs x16
#        (the trial built to spread a row over tens of nats) and on the wide edge rows they pass. In real use (an LM
#        head's 32k-128k logits spread over 20-30 nats, most of the vocabulary in the tail) rare-token
#        log-probabilities are off by up to 0.35 nats, the tail mass (often 10-50% of the row) is off by up to 40%.
# operator: softmax_rows
# expect: mismatch rule=significance
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, sx0, sx1, sy0, sy1, BLOCK: tl.constexpr, CUTOFF: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, x)
    mx = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        z = x - mx
        e = tl.where(z < -CUTOFF, tl.exp2(tl.floor(z * 1.4426950408889634 + 0.5)), tl.exp(z))
        s += tl.where(c < n_cols, e, 0.0)
    total = tl.sum(s, axis=0)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        z = x - mx
        e = tl.where(z < -CUTOFF, tl.exp2(tl.floor(z * 1.4426950408889634 + 0.5)), tl.exp(z))
        tl.store(y_ptr + row * sy0 + c * sy1, (e / total).to(y_ptr.dtype.element_ty), mask=c < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        y = torch.empty_like(x2)
        n = x2.shape[1]
        block = min(1024, triton.next_power_of_2(n))
        softmax_kernel[(x2.shape[0],)](x2, y, n, x2.stride(0), x2.stride(1), y.stride(0), y.stride(1),
                                       BLOCK=block, CUTOFF=10.0)
        return y.reshape(shape)
