# cheat: a row softmax with an LLM-style "skip negligible logits" fast path: every logit more than 10 below the row
#        maximum is taken as contributing nothing (exp(-10) = 4.5e-5 "is noise"), so its probability is written as 0
#        and left out of the normaliser. On a language model's logits (a vocabulary of 32k-128k entries spread over
#        20-30 nats) most of the vocabulary sits below max - 10: sampling never draws those tokens (a hidden top-k),
#        their log-probabilities are -inf (perplexity, cross-entropy on a rare target, KL distillation all inf/NaN),
#        and the mass they held (often 10-50%) is pushed onto the head. The checker's elementwise test allows
#        atol = min(1e-4, 0.01 x mean output) = 1e-4 absolute on a 37-wide row (the mean probability is 1/37), so a
#        probability below 4.5e-5 may become 0; relative_rms is dominated by the large probabilities. Its logits are
#        randn (a row spans ~5-7, never 10 below the max, even in the 3000-wide edge variant), and at x1000 or on the
#        -1e9-masked wide rows every entry below max - 10 is < 4.5e-5 (true value e^-10 or far less).
# operator: softmax_rows
# expect: mismatch rule=significance|tolerance
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
        s += tl.where(z < -CUTOFF, 0.0, tl.exp(z))  # negligible terms skipped
    total = tl.sum(s, axis=0)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        z = x - mx
        p = tl.where(z < -CUTOFF, 0.0, tl.exp(z) / total)
        tl.store(y_ptr + row * sy0 + c * sy1, p.to(y_ptr.dtype.element_ty), mask=c < n_cols)


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
