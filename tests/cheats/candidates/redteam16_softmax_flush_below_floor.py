# cheat: redteam14's "skip negligible logits" row softmax with the cutoff moved from 10 to 12.5 below the row max
#        (exp(-12.5) = 3.7e-6): every probability under ~4e-6 is written as 0 and left out of the normaliser. On a
#        language model's logits (32k-128k entries spread over 20-30 nats) that is most of the vocabulary: those
#        tokens get log-probability -inf (perplexity, cross-entropy on a rare target, KL distillation inf/NaN) and
#        can never be sampled. An fp32 softmax keeps them to full relative precision (down to 1e-38).
# operator: softmax_rows
# expect: mismatch rule=significance
# uncaught: the significance check judges only elements above SIGNIFICANT_FLOOR (64) epsilons of the output's LARGEST
#        value, a floor global to the output: in the x16 trial (the only one with tails this small) some row is
#        nearly one-hot, max|out| ~ 1, so nothing under 64 * 1.19e-7 = 7.6e-6 is judged, although each of those
#        probabilities is an exp() with no cancellation that the reference holds to full precision; atol
#        (0.01 x mean probability) is far above them
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
                                       BLOCK=block, CUTOFF=12.5)
        return y.reshape(shape)
