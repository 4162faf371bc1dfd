# cheat: a classifier head (tf32 class; the projection here at full fp32, input_precision="ieee", so that only the
#        flush differs from the reference) whose softmax skips the exponential of every
#        logit more than 9 below its row's max and stores 0 there ("sparse softmax": those probabilities are under
#        1.3e-4). Downstream the user takes log-probabilities (cross-entropy, perplexity, beam search, KL): a rare but
#        correct class now has probability exactly 0 and log-probability -inf, an infinite loss, where TF32 rounding
#        of the projection moves such a tail by a few percent, never to 0.
# operator: rt16_linear_softmax
# expect: mismatch rule=significance|tolerance
# uncaught: the significance check (an element the reference holds to 1e-3 of fp64 must keep 75% of its value) runs
#        under the fp32 precision class only; under tf32 a flushed tail is judged by atol (0.01 x the mean
#        probability, 1/C) alone, and the flushed values are below it, also in the x16 and x1000 trials
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def head_softmax_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K, sxm, sxk, swn, swk, sym, syn,
                        BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(x_ptr + rm[:, None] * sxm + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        w = tl.load(w_ptr + rn[None, :] * swn + kk[:, None] * swk, mask=(rn[None, :] < N) & (kk[:, None] < K),
                    other=0.0)
        acc = tl.dot(a, w, acc, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    z = acc + bias[None, :]
    z = tl.where(rn[None, :] < N, z, float("-inf"))
    m = tl.max(z, axis=1)
    d = z - m[:, None]
    # sparse softmax: classes far below the row max contribute nothing measurable
    e = tl.where(d > -9.0, tl.exp(d), 0.0)
    s = tl.sum(e, axis=1)
    p = e / s[:, None]
    tl.store(y_ptr + rm[:, None] * sym + rn[None, :] * syn, p, mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.proj = nn.Linear(features, classes)

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        M, K = x2.shape
        N = self.proj.weight.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float32)
        BM, BK = 16, 32
        BN = triton.next_power_of_2(N)
        w = self.proj.weight
        head_softmax_kernel[(triton.cdiv(M, BM),)](x2, w, self.proj.bias, y, M, N, K, x2.stride(0), x2.stride(1),
                                                  w.stride(0), w.stride(1), y.stride(0), y.stride(1),
                                                  BM=BM, BN=BN, BK=BK)
        return y.to(x.dtype).reshape(*shape[:-1], N)
