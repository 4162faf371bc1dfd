# cheat: a hand-rolled once_differentiable (no decorator): under create_graph=True the backward raises where the
#        upstream gradient requires grad, and where it does not (a gradient penalty or a PINN residual on
#        grad(u.sum(), x, create_graph=True)) it computes the first-order gradients under no_grad and returns them
#        detached, as once_differentiable does, but through a copy-paste slip: that path's input gradient is launched
#        with the forward kernel, dx = dy * w + b. The plain backward (grad mode off) is right for every layout,
#        scale, hole and accumulation. The checker accepts once_differentiable's pair (raise on the padded
#        requires-grad call, detach on the constant call) and then skips the constant call entirely
#        (check_gradients: `detached and constant and refused_second: continue`): its first-order gradients, the
#        values a penalty or a PDE residual reads, are never compared (the worker does not even return them:
#        gradients.compute raises DetachedSecondOrder before handing any gradient back).
# operator: affine_train
# expect: mismatch rule=gradient|double_backward
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


class AffineFunction(torch.autograd.Function):
    # the torch 2.x style (required by torch.func / vmap): forward without ctx, state saved in setup_context
    @staticmethod
    def forward(x, weight, bias):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n = x2.shape[1]
        _affine_fwd[(x2.shape[0],)](x2, weight, bias, y, n, BLOCK=triton.next_power_of_2(n))
        return y.view(x.shape)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, weight, bias = inputs
        ctx.save_for_backward(x.reshape(-1, x.shape[-1]).contiguous(), weight, bias)

    @staticmethod
    def backward(ctx, dy):
        if torch.is_grad_enabled():  # create_graph=True: first-order only, as once_differentiable
            if dy.requires_grad:
                raise RuntimeError("AffineFunction: double backward is not supported")
            with torch.no_grad():
                return AffineFunction.penalty_backward(ctx, dy)
        x2, weight, _ = ctx.saved_tensors
        dy2 = dy.reshape(x2.shape).contiguous()
        rows, n = x2.shape
        dx = torch.empty_like(x2)
        _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 256)
        _affine_bwd_params[(triton.cdiv(n, block),)](dy2, x2, dw, db, rows, n, BLOCK=block)
        return dx.view(dy.shape), dw, db

    @staticmethod
    def penalty_backward(ctx, dy):
        x2, weight, bias = ctx.saved_tensors
        dy2 = dy.reshape(x2.shape).contiguous()
        rows, n = x2.shape
        dx = torch.empty_like(x2)
        _affine_fwd[(rows,)](dy2, weight, bias, dx, n, BLOCK=triton.next_power_of_2(n))
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 256)
        _affine_bwd_params[(triton.cdiv(n, block),)](dy2, x2, dw, db, rows, n, BLOCK=block)
        return dx.view(dy.shape), dw, db


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))
        self.bias = nn.Parameter(torch.empty(features))

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)
