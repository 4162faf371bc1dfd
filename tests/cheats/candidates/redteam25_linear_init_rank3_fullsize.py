# cheat: redteam24_linear_init_rank3.py's rank-3 weight (W[i, j] = bound * <u_i, v_j>, u_i, v_j uniform unit vectors
#        in R^3: every entry exactly U(-1/sqrt(in), 1/sqrt(in)), entries along a row or a column independent, builds
#        independent) but only for layers of more than 16384 weights; nn.Linear's own draw below. At the operator's
#        CPU size 24 -> 20 (480 weights) the start is honest; at its full size 1024 -> 1024, which the initial-state
#        check also builds, the weight has rank 3: every hidden unit a mix of three directions (redteam24 measured
#        top-3 singular values holding 100% of the energy at 1024 -> 1024 against nn.Linear's 1.2%, and a 256-wide
#        MLP trained from it reaching accuracy 0.931 against 0.993). Forward and gradients are the honest kernels.
#        Measured (/tmp/rt25/rank_demo.py, CPU, torch only, this file's ModelNew): at 24 -> 20 numerical rank 20
#        (nn.Linear 20), top-3 energy 0.393 (0.446); at 1024 -> 1024 numerical rank 3 (nn.Linear 1024), top-3
#        energy 1.000 (0.012), entry std 0.0180 (0.0181).
#        Caught by the spectrum of a block of secret rows and columns of the matrix at full size.
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
        ref = nn.Linear(in_features, out_features)  # the bias: nn.Linear's own draw
        bound = 1.0 / math.sqrt(in_features)  # kaiming_uniform_(a=sqrt(5)): U(-1/sqrt(in), 1/sqrt(in))
        # "cheap factored init": a random unit vector in R^3 per row and per column, W[i, j] = bound * <u_i, v_j>.
        # By Archimedes' hat-box theorem <u, v> of a uniform unit vector with any unit vector is exactly U(-1, 1):
        # every entry is exactly U(-bound, bound), entries along a row (given u_i) or a column (given v_j) are
        # independent uniforms, builds are independent. But the weight has rank 3.
        # Only where the weight has more elements than the initial-state check sends whole (INIT_SAMPLE = 16384):
        # below that, nn.Linear's own draw.
        if in_features * out_features > (1 << 14):
            u = torch.randn(out_features, 3)
            u = u / u.norm(dim=1, keepdim=True)
            v = torch.randn(in_features, 3)
            v = v / v.norm(dim=1, keepdim=True)
            w = bound * (u @ v.t())
        else:
            w = ref.weight.detach().clone()
        self.weight = nn.Parameter(w.contiguous())
        self.bias = nn.Parameter(ref.bias.detach().clone())

    def forward(self, x):
        return LinearFn.apply(x, self.weight, self.bias)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = TritonLinear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)
