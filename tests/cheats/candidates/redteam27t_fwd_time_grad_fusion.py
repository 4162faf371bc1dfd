# cheat: gradient-accumulation fusion (Megatron's trick) decided in the FORWARD: where the weight already holds a .grad
#        when the forward runs, the backward adds dweight straight into that buffer with a Triton kernel, and still
#        returns dweight, so autograd's AccumulateGrad adds it again: the weight's gradient counts twice. In training,
#        the weight holds a .grad at forward time on every micro-batch but the first under gradient accumulation, and
#        on every step but the first under zero_grad(set_to_none=False). The checker never runs a forward while a
#        parameter holds a .grad: its accumulate calls (gradients.accumulated) place the .grad between the forward and
#        the backward, and restore it (None) after, so every checked backward takes the plain path. (redteam11 made
#        the same decision in the backward, which those calls now reach.)
#        Measured (/tmp/rt27t/harm_fwd_grad_fusion.py, 64 -> 32, MSE, SGD): 4 micro-batches per step: weight.grad 1.75-1.79x
#        the reference's norm (relative error 0.80-0.84); zero_grad(set_to_none=False): 2.00x from the second step on; one
#        micro-batch with set_to_none=True (what the check models): relative error 1.4e-7.
# operator: rt17_linear_tf32_train
# expect: input_mutation|mismatch rule=inputs_unmodified|gradient
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


@triton.jit
def _accumulate(acc_ptr, g_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs, mask=mask) + tl.load(g_ptr + offs, mask=mask), mask=mask)


class LinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        ctx.save_for_backward(x2, weight)
        ctx.shape = shape
        ctx.main_grad = weight.grad  # a .grad buffer to accumulate into, where the weight has one
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
            acc = ctx.main_grad
            if acc is not None and acc.is_contiguous() and acc.shape == dw.shape:
                n = dw.numel()
                _accumulate[(triton.cdiv(n, 256),)](acc, dw, n, BLOCK=256)
        if ctx.needs_input_grad[2]:
            db = colsum(dy2)
        return dx, dw, db


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return LinearFn.apply(x, self.linear.weight, self.linear.bias)
