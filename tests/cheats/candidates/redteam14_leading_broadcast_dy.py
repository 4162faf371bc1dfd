# cheat: an LLM-style "scalar upstream" fast path keyed on the FIRST stride: when dy.stride(0) == 0 the upstream
#        gradient is taken for one value broadcast everywhere (what loss = y.sum() hands back) and only dy's first
#        element is read. A stride of 0 in a leading dimension alone is as common: a sum over the batch or the
#        set (DeepSets / graph readout h.sum(0), a summed loss over a pooled output) hands back
#        dy = g[None, :].expand(rows, n), strides (0, 1): one value PER FEATURE (y.sum(1) of a (batch, tokens,
#        features) output gives strides (n, 0, 1)). There every column uses
#        g[0], so dx, dweight and dbias are wrong. The checker's stride-0 upstream layouts are "expanded" (every
#        stride 0) and "rows" (the LAST stride 0, redteam11_bwd_partial_broadcast_dy's fix); none has a stride 0
#        in a leading dimension with a non-zero last stride.
#        closed: upstream layout "broadcast": stride 0 in a drawn set of dims that is neither all nor the last
#        alone (strides (0, 1), (n, 0, 1), (0, n, 1) ...).
# operator: affine_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _affine_fwd(x_ptr, w_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n + cols, x * w + b, mask=mask)


@triton.jit
def _affine_bwd_x(dy_ptr, w_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    dy = tl.load(dy_ptr + row * n + cols, mask=mask)
    tl.store(dx_ptr + row * n + cols, dy * tl.load(w_ptr + cols, mask=mask), mask=mask)


@triton.jit
def _affine_bwd_params(dy_ptr, x_ptr, dw_ptr, db_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        dy = tl.load(dy_ptr + r * n + cols, mask=mask, other=0.0)
        dw += dy * tl.load(x_ptr + r * n + cols, mask=mask, other=0.0)
        db += dy
    tl.store(dw_ptr + cols, dw, mask=mask)
    tl.store(db_ptr + cols, db, mask=mask)


@triton.jit
def _affine_bwd_scalar(g_ptr, x_ptr, w_ptr, dx_ptr, dw_ptr, db_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    g = tl.load(g_ptr)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    xs = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        xs += tl.load(x_ptr + r * n + cols, mask=mask, other=0.0)
        tl.store(dx_ptr + r * n + cols, g * w, mask=mask)
    tl.store(dw_ptr + cols, g * xs, mask=mask)
    tl.store(db_ptr + cols, g * rows, mask=mask)


class AffineFunction(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, x, weight, bias):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n = x2.shape[1]
        _affine_fwd[(x2.shape[0],)](x2, weight, bias, y, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, weight)
        return y.view(x.shape)

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        rows, n = x2.shape
        dx = dw = db = None
        if dy.stride(0) == 0:
            # loss = y.sum() (or .mean()): autograd hands back ONE value expanded with stride 0; read it once
            # instead of materializing rows * n copies of it
            dx = torch.empty_like(x2)
            dw = torch.empty_like(weight)
            db = torch.empty_like(weight)
            _affine_bwd_scalar[(1,)](dy, x2, weight, dx, dw, db, rows, n, BLOCK=triton.next_power_of_2(n))
            dx = dx.view(dy.shape) if ctx.needs_input_grad[0] else None
            dw = dw if ctx.needs_input_grad[1] else None
            db = db if ctx.needs_input_grad[2] else None
            return dx, dw, db
        dy2 = dy.reshape(x2.shape).contiguous()
        if ctx.needs_input_grad[0]:
            dx = torch.empty_like(x2)
            _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
            dx = dx.view(dy.shape)
        if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
            dw = torch.empty_like(weight)
            db = torch.empty_like(weight)
            block = min(triton.next_power_of_2(n), 256)
            _affine_bwd_params[(triton.cdiv(n, block),)](dy2, x2, dw, db, rows, n, BLOCK=block)
            dw = dw if ctx.needs_input_grad[1] else None
            db = db if ctx.needs_input_grad[2] else None
        return dx, dw, db


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))
        self.bias = nn.Parameter(torch.empty(features))

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)
