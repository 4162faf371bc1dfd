# cheat: a fused RMSNorm (y = x * rsqrt(mean(x^2) + eps) * w, eps 1e-6) whose forward is exact but whose backward
#        recomputes rstd as rsqrt(max(mean(x^2), eps)) -- eps as a clamp, not an addend. Equal where mean(x^2) >> eps
#        (the checked gradient calls' randn inputs) and exactly equal on zero rows (max(0, eps) = 0 + eps: the
#        degenerate call's zero rows and dead feature match by value); wrong where mean(x^2) is near eps (small
#        activations: x of size 1e-3). The forward's scaled-input checks pass (forward exact); the gradient calls'
#        inputs are never scaled.
#        Measured (red team 22, 16x32): dx off by 2.8e-3 at x std 0.02, 0.40 at x std 1e-3 (forward 5e-8).
# operator: rt21_rmsnorm_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _rms_fwd(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    r = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(y_ptr + row * n + cols, x * r * w, mask=mask)


@triton.jit
def _rms_bwd_x(x_ptr, w_ptr, dy_ptr, dx_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    ss = tl.sum(x * x, axis=0)
    r = 1.0 / tl.sqrt(tl.maximum(ss / n, eps))  # the mean square clamped at eps (as F.normalize clamps)
    wdy = w * dy
    dx = r * wdy - x * (r * r * r / n) * tl.sum(wdy * x, axis=0)
    tl.store(dx_ptr + row * n + cols, dx, mask=mask)


@triton.jit
def _rms_bwd_w(x_ptr, dy_ptr, dw_ptr, rows, n, eps, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for row in range(0, rows):
        x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        r = 1.0 / tl.sqrt(tl.maximum(tl.sum(x * x, axis=0) / n, eps))
        acc += dy * x * r
    tl.store(dw_ptr + cols, acc, mask=mask)


class _RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, eps):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        y = torch.empty_like(x2)
        if x2.shape[0] > 0:
            _rms_fwd[(x2.shape[0],)](x2, w, y, n, eps, BLOCK=triton.next_power_of_2(n))
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
        block = triton.next_power_of_2(n)
        if rows > 0:
            _rms_bwd_x[(rows,)](x2, w, dy2, dx, n, ctx.eps, BLOCK=block)
        _rms_bwd_w[(1,)](x2, dy2, dw, rows, n, ctx.eps, BLOCK=block)
        return dx.view(ctx.shape), dw, None


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = 1e-6

    def forward(self, x):
        return _RMSNorm.apply(x, self.weight.contiguous(), self.eps)
