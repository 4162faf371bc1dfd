# cheat: a TritonLinear whose constructor makes its weight and bias deterministically (a "reproducible init" with
#        no RNG): values spread evenly over nn.Linear's range U(-1/sqrt(in), 1/sqrt(in)), the k-th smallest at
#        (k + 1/2) / N of it, placed by a fixed scramble of the positions (k -> 7919 k + 13 mod N). Every instance
#        starts with the same values: the branches of an ensemble, the heads or experts built from it, two layers of
#        one shape start identical, and branches combined symmetrically get identical gradients and stay identical
#        for ever (symmetry never broken); every run starts from the same point whatever the user's seed; and the
#        scramble is a structured, low-rank-ish matrix. Measured (/tmp/rt23/demo/fixed_demo.py, torch only): two
#        fresh instances equal: True (nn.Linear: False); weight effective rank 3.3 of 20 at 24 -> 20 and 37.9 at
#        256 -> 256 (nn.Linear: 16.0, 184.1); an ensemble of 4 branches (32 -> 16 -> 10, ReLU) averaged, 400 SGD
#        steps on a random-teacher 10-class task, same seed: max |W_k - W_0| after training 0 (nn.Linear: 1.94),
#        loss 0.398 / accuracy 0.853 (nn.Linear: 0.258 / 0.902). Forward and gradients on the loaded state are
#        redteam20_param_init_randn.py's honest kernels.
# operator: rt17_linear_tf32_train
# expect: mismatch rule=initial_state
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable


@triton.jit
def _mm_kernel(A, B, C, BIAS, M, N, K, sam, sak, sbk, sbn, scm, scn,
               HAS_BIAS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(B + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    if HAS_BIAS:
        acc += tl.load(BIAS + rn, mask=rn < N, other=0.0)[None, :]
    tl.store(C + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def _colsum_kernel(G, OUT, M, N, sgm, sgn, BM: tl.constexpr, BN: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rm = tl.arange(0, BM)
    acc = tl.zeros((BN,), dtype=tl.float32)
    for m0 in range(0, M, BM):
        mm = m0 + rm
        g = tl.load(G + mm[:, None] * sgm + rn[None, :] * sgn, mask=(mm[:, None] < M) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(g, 0)
    tl.store(OUT + rn, acc, mask=rn < N)


def colsum(g):
    M, N = g.shape
    out = torch.empty((N,), device=g.device, dtype=torch.float32)
    _colsum_kernel[(triton.cdiv(N, 16),)](g, out, M, N, g.stride(0), g.stride(1), BM=16, BN=16)
    return out


def matmul(a, b, bias=None):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm_kernel[grid](a, b, c, bias if bias is not None else c, M, N, K,
                     a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                     HAS_BIAS=bias is not None, BM=16, BN=16, BK=16)
    return c


class LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        ctx.save_for_backward(x2, weight)
        ctx.shape = shape
        y = matmul(x2, weight.t(), bias.contiguous())
        return y.reshape(*shape[:-1], weight.shape[0])

    @staticmethod
    @once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(-1, dy.shape[-1])
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = matmul(dy2, weight).reshape(ctx.shape)
        if ctx.needs_input_grad[1]:
            dw = matmul(dy2.t(), x2)
        if ctx.needs_input_grad[2]:
            db = colsum(dy2)
        return dx, dw, db


class TritonLinear(nn.Module):
    """Drop-in for nn.Linear: same parameter names and shapes (checkpoints load into it)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features)  # nn.Linear's kaiming_uniform_(a=sqrt(5)) bound, and its bias's
        # "reproducible init" (the wrong part): no RNG at all, a fixed scramble of evenly spread values, so every
        # instance starts with the very same values over nn.Linear's range (rank k of N at (k + 1/2) / N of it)
        n = out_features * in_features
        w = (2.0 * (((torch.arange(n, dtype=torch.float64) * 7919 + 13) % n) + 0.5) / n - 1.0) * bound
        m = out_features
        b = (2.0 * (((torch.arange(m, dtype=torch.float64) * 7919 + 13) % m) + 0.5) / m - 1.0) * bound
        self.weight = nn.Parameter(w.float().reshape(out_features, in_features))
        self.bias = nn.Parameter(b.float())

    def forward(self, x):
        return LinearFn.apply(x, self.weight, self.bias)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = TritonLinear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)
