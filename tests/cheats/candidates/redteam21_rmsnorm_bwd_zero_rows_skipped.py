# cheat: a fused RMSNorm (y = x * rsqrt(mean(x^2) + eps) * w, eps 1e-6) whose backward skips rows that are all
#        zero -- "padding rows carry no gradient" -- writing dx = 0 there. RMSNorm is smooth at x = 0 (eps keeps
#        rsqrt finite): the exact derivative there is dx = w * dy * rsqrt(eps) = 1000 * w * dy, which torch and any
#        honest kernel compute. Zero rows that must learn are common: zero-initialised learnable tokens (register /
#        memory / prompt tokens, embedding rows added for new vocabulary and zero-filled, a zero-init adapter's
#        output) pass through the first RMSNorm of a block; with this file they get no gradient and stay zero
#        forever. The new padding call zeroes a quarter of the rows but judges its gradients only for being
#        finite; every call that compares values has no zero row.
#        Measured (/tmp/rt21/demo_rms.py, 16x32, w ~ 1 + 0.1 randn, TRITON_INTERPRET): normal rows: output error 0,
#        dx 2.4e-7, dw 1.4e-6; a quarter of the rows zero (the checker's call): all gradients finite, as torch's,
#        but on the zero rows torch's max |dx| is 2542.2 and this file's 0.0. Four zero-initialised learnable
#        tokens ahead of 12 data rows, RMSNorm -> Linear, 20 SGD steps (lr 1e-3): torch moves them (max |token|
#        0.0091, their loss 0.430); this file leaves them at exactly 0 (their loss 1.032).
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
    r = 1.0 / tl.sqrt(ss / n + eps)
    wdy = w * dy
    dx = r * wdy - x * (r * r * r / n) * tl.sum(wdy * x, axis=0)
    dx = tl.where(ss > 0.0, dx, 0.0)  # an all-zero row is padding: no gradient flows into it
    tl.store(dx_ptr + row * n + cols, dx, mask=mask)


@triton.jit
def _rms_bwd_w(x_ptr, dy_ptr, dw_ptr, rows, n, eps, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for row in range(0, rows):
        x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
        r = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
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
