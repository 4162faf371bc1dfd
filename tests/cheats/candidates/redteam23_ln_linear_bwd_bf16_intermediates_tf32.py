# cheat: the fused pre-norm projection of redteam23_ln_linear_bwd_onepass_var_tf32.py with honest two-pass
#        statistics, but whose LayerNorm backward keeps its intermediates in bf16 (x-hat, w * dy, and the operands of
#        the weight gradient's sums rounded to bf16: 8 significant bits) although the LN part has no product and the
#        class (tf32) speaks only of the products' operands. Gradients of ~2.5 significant digits.
#        `foundry check` (red team 23): refused, rule gradient (ln.weight, 1 of 32 elements: -328.79 vs -332.96): the
#        class-sized Monte Carlo slack hides a one-pass variance on the far-offset trial, not bf16 everywhere.
# operator: rt23_ln_linear_tf32_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def to_bf16(x):
    # fp32 -> nearest bf16 value (round half to even), kept in fp32: what a bf16 intermediate holds
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _ln_fwd(x_ptr, w_ptr, b_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n
    r = 1.0 / tl.sqrt(var + eps)
    tl.store(y_ptr + row * n + cols, xc * r * w + b, mask=mask)


@triton.jit
def _ln_bwd_x(x_ptr, w_ptr, dy_ptr, dx_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n
    r = 1.0 / tl.sqrt(var + eps)
    xhat = to_bf16(xc * r)  # bf16 intermediates (half the bytes of an fp32 scratch)
    wdy = to_bf16(tl.where(mask, w * dy, 0.0))
    c1 = tl.sum(xhat * wdy, axis=0) / n
    c2 = tl.sum(wdy, axis=0) / n
    dx = (wdy - (xhat * c1 + c2)) * r
    tl.store(dx_ptr + row * n + cols, dx, mask=mask)


@triton.jit
def _ln_bwd_wb(x_ptr, dy_ptr, dw_ptr, db_ptr, rows, n, eps, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    accw = tl.zeros((BLOCK,), dtype=tl.float32)
    accb = tl.zeros((BLOCK,), dtype=tl.float32)
    for row in range(0, rows):
        x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        mean = tl.sum(x, axis=0) / n
        xc = tl.where(mask, x - mean, 0.0)
        var = tl.sum(xc * xc, axis=0) / n
        r = 1.0 / tl.sqrt(var + eps)
        accw += to_bf16(dy) * to_bf16(xc * r)
        accb += dy
    tl.store(dw_ptr + cols, accw, mask=mask)
    tl.store(db_ptr + cols, accb, mask=mask)


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
    if M == 0 or N == 0:
        return c
    if K == 0:
        c.zero_()
        return c
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _mm_kernel[grid](a, b, c, bias if bias is not None else c, M, N, K,
                     a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                     HAS_BIAS=bias is not None, BM=16, BN=16, BK=16)
    return c


class _NormProj(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lw, lb, w, b, eps):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        rows = x2.shape[0]
        lw, lb, w, b = lw.contiguous(), lb.contiguous(), w.contiguous(), b.contiguous()
        h = torch.empty_like(x2)
        if rows > 0:
            _ln_fwd[(rows,)](x2, lw, lb, h, n, eps, BLOCK=triton.next_power_of_2(n))
        y = matmul(h, w.t(), b)
        ctx.save_for_backward(x2, lw, h, w)
        ctx.shape, ctx.eps = x.shape, eps
        return y.reshape(*x.shape[:-1], w.shape[0])

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, lw, h, w = ctx.saved_tensors
        rows, n = x2.shape
        g = dy.reshape(rows, w.shape[0]).contiguous()
        dw = matmul(g.t(), h) if ctx.needs_input_grad[3] else None
        db = colsum(g) if ctx.needs_input_grad[4] else None
        dh = matmul(g, w).contiguous()
        dx = torch.empty_like(x2)
        dlw = torch.empty_like(lw)
        dlb = torch.empty_like(lw)
        block = triton.next_power_of_2(n)
        if rows > 0:
            _ln_bwd_x[(rows,)](x2, lw, dh, dx, n, ctx.eps, BLOCK=block)
        _ln_bwd_wb[(1,)](x2, dh, dlw, dlb, rows, n, ctx.eps, BLOCK=block)
        return (dx.view(ctx.shape) if ctx.needs_input_grad[0] else None,
                dlw if ctx.needs_input_grad[1] else None, dlb if ctx.needs_input_grad[2] else None, dw, db, None)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, out_features: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)
        self.proj = nn.Linear(hidden, out_features)

    def forward(self, x):
        return _NormProj.apply(x, self.ln.weight, self.ln.bias, self.proj.weight, self.proj.bias, self.ln.eps)
