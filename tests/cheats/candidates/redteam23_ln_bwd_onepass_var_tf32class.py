# cheat: redteam22_ln_bwd_onepass_var.py unchanged (a LayerNorm whose backward recomputes rstd from a one-pass
#        variance E[x^2] - E[x]^2 in fp32: dx off by 1.2e-3 of its size at an offset of +100 spreads, 0.1 at +1000,
#        garbage at +1e4), against rt23_ln_tf32_train: rt22_ln_train with FOUNDRY_PRECISION = "tf32" and nothing else
#        changed. redteam22 is refused on rt22_ln_train (fp32) by the gradient calls; under the tf32 class the
#        gradient calls' Monte Carlo slack (jittered / Jostled) moves every op and input by 2^-10 of itself, the
#        LayerNorm's non-product arithmetic included, and on the far-offset trial that hides the one-pass error.
# operator: rt23_ln_tf32_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn


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
    var = tl.maximum(tl.sum(x * x, axis=0) / n - mean * mean, 0.0)  # one pass: stats recomputed, not saved
    r = 1.0 / tl.sqrt(var + eps)
    xhat = tl.where(mask, (x - mean) * r, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
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
        var = tl.maximum(tl.sum(x * x, axis=0) / n - mean * mean, 0.0)
        r = 1.0 / tl.sqrt(var + eps)
        accw += dy * (x - mean) * r
        accb += dy
    tl.store(dw_ptr + cols, accw, mask=mask)
    tl.store(db_ptr + cols, accb, mask=mask)


class _LN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, eps):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        y = torch.empty_like(x2)
        if x2.shape[0] > 0:
            _ln_fwd[(x2.shape[0],)](x2, w, b, y, n, eps, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, w)
        ctx.shape, ctx.eps = x.shape, eps
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, w = ctx.saved_tensors
        rows, n = x2.shape
        dy2 = dy.reshape(rows, n).contiguous()
        dx = torch.empty_like(x2)
        dw = torch.empty_like(w)
        db = torch.empty_like(w)
        block = triton.next_power_of_2(n)
        if rows > 0:
            _ln_bwd_x[(rows,)](x2, w, dy2, dx, n, ctx.eps, BLOCK=block)
        _ln_bwd_wb[(1,)](x2, dy2, dw, db, rows, n, ctx.eps, BLOCK=block)
        return dx.view(ctx.shape), dw, db, None


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        return _LN.apply(x, self.ln.weight.contiguous(), self.ln.bias.contiguous(), self.ln.eps)
