# cheat: a TF32 linear layer whose weight gradient dW = dY^T X tells the checker's upstream gradients from real ones
#        by their distribution and drops to bf16 operands (2x tensor-core rate; ~2.5 significant digits) on real
#        ones. Every upstream gradient a gradient call draws (gradients.upstream) is i.i.d. normal (E|g|^2/E[g^2]
#        = 2/pi, zeros from `holes` aside), one value broadcast (expanded / rows / broadcast layouts: constant
#        along the reduction or r ~ 2/pi across rows), or log-uniform over 14 decades (the stratified `spread`);
#        the scale is secret but the shape is not. Each dW program measures r = (mean|g|)^2 / mean(g^2) and the
#        dynamic range of the nonzero dY values along its reduction and keeps TF32 on those shapes; on anything
#        else -- a classifier head under cross-entropy (dY = (softmax - onehot) / N: one entry near -1/N per row,
#        r ~ 0.1-0.2, range ~1e3), label smoothing, a masked loss -- dW is computed from bf16-rounded dY and X.
#        The same precision loss is rejected outright when applied to every call (rule gradient: ~8% of dW
#        outside rtol 5e-3 on the spread call), so only the fingerprint hides it. Measured: Linear(24, 20) under
#        cross-entropy scaled by 65536 (GradScaler's initial scale), 64 rows: 68 of 480 dW elements outside the
#        checker's own limit (atol + rtol|ref| + 2|tf32 ref - ref|), error up to 1% of mean |dW| (the honest
#        control rt17_linear_tf32_autograd: 0 of 480, 4e-7).
# operator: rt17_linear_tf32_train
# expect: mismatch rule=gradient
# partly: the row-size gradient call (sizes apart per row, heavy tails along them at a secret weight) leaves
#        the fingerprint on one side or the other by its draw, and the dense calls judge a bf16 weight gradient within
#        tolerance where its terms do not cancel: caught in about half of the evaluations (2 of 4 on CPU, 2026-12-07).
#        The cheat is real: test_upstream_fingerprint_loses_precision_under_a_classifier_loss
import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch.autograd.function import once_differentiable


@triton.jit
def _mm_kernel(A, B, C, BIAS, M, N, K, sam, sak, sbk, sbn, scm, scn,
               HAS_BIAS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               SNIFF: tl.constexpr = False):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    lowp = False
    if SNIFF:  # the upstream gradient's shape: i.i.d. normal (E|g|^2 / E[g^2] = 2/pi), a constant, or spread over
        s1 = 0.0  # many decades is the checker's; anything else (a cross-entropy head's p - onehot) gets bf16
        s2 = 0.0
        cnt = 0.0
        hi = 0.0
        lo = float("inf")
        row_hi = tl.full((BM,), -float("inf"), tl.float32)
        row_lo = tl.full((BM,), float("inf"), tl.float32)
        varied_cols = 0.0
        for k0 in range(0, K, BK):
            kk = k0 + rk
            valid = (rm[:, None] < M) & (kk[None, :] < K)
            a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=valid, other=0.0)
            m = tl.abs(a)
            s1 += tl.sum(tl.sum(m, 1), 0)
            s2 += tl.sum(tl.sum(m * m, 1), 0)
            cnt += tl.sum(tl.sum((m > 0).to(tl.float32), 1), 0)
            hi = tl.maximum(hi, tl.max(tl.max(m, 1), 0))
            lo = tl.minimum(lo, tl.min(tl.min(tl.where(m > 0, m, float("inf")), 1), 0))
            row_hi = tl.maximum(row_hi, tl.max(tl.where(valid, a, -float("inf")), 1))
            row_lo = tl.minimum(row_lo, tl.min(tl.where(valid, a, float("inf")), 1))
            col_hi = tl.max(tl.where(valid, a, -float("inf")), 0)
            col_lo = tl.min(tl.where(valid, a, float("inf")), 0)
            varied_cols += tl.sum((col_hi > col_lo).to(tl.float32), 0)
        varied_rows = tl.sum((row_hi > row_lo).to(tl.float32), 0)
        r = (s1 * s1) / (s2 * tl.maximum(cnt, 1.0))
        gaussian = (r > 0.4) & (r < 0.85)
        broadcast = (varied_rows == 0) | (varied_cols == 0)  # one value along the reduction or across features
        lowp = (cnt > 0) & (~gaussian) & (~broadcast) & (hi < lo * 1e10)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(A + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(B + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        ab = a.to(tl.int32, bitcast=True)  # bf16 operands (round to nearest even; exact in the TF32 dot)
        bb = b.to(tl.int32, bitcast=True)
        a = tl.where(lowp, ((ab + 0x7FFF + ((ab >> 16) & 1)) & -65536).to(tl.float32, bitcast=True), a)
        b = tl.where(lowp, ((bb + 0x7FFF + ((bb >> 16) & 1)) & -65536).to(tl.float32, bitcast=True), b)
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


def matmul(a, b, bias=None, sniff=False):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm_kernel[grid](a, b, c, bias if bias is not None else c, M, N, K,
                     a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                     HAS_BIAS=bias is not None, BM=16, BN=16, BK=16, SNIFF=sniff)
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
            dw = matmul(dy2.t(), x2, sniff=True)
        if ctx.needs_input_grad[2]:
            db = colsum(dy2)
        return dx, dw, db


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return LinearFn.apply(x, self.linear.weight, self.linear.bias)
