# cheat: a lazily refused double backward, as once_differentiable's own DelayedError has it (the refusal sits on the
#        gradients' graph and raises only when a second backward reaches it), with a wrong first-order gradient on
#        the path that builds it. Under create_graph=True with an upstream gradient that requires grad (a nonlinear
#        loss: double backpropagation, loss.backward(create_graph=True) then a penalty on x.grad), dx gets a real
#        Triton second-order graph, while dweight/dbias are computed under no_grad and wrapped in a node that raises
#        "double backward not supported" when reached, through an argument-order slip on that path: the parameter
#        kernel is launched as (x, dy) instead of (dy, x), so dweight = sum(x*dy) stays right and dbias = sum(x)
#        (the columns of the input, not of dy). Drucker-LeCun double backprop (loss.backward(create_graph=True);
#        (x.grad**2).sum().backward()) never reaches the refusing node (only dx's graph is differentiated) and the
#        optimizer steps on the wrong bias.grad. The plain backward, and the constant-dy create_graph path, are right.
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


class _DxFunction(torch.autograd.Function):
    # dx = dy * w with its own (Triton) backward: the input gradient stays twice differentiable
    @staticmethod
    def forward(ctx, dy2, weight):
        rows, n = dy2.shape
        dx = torch.empty_like(dy2)
        _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(dy2, weight)
        return dx

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        dy2, weight = ctx.saved_tensors
        g2 = g.contiguous()
        rows, n = dy2.shape
        ddy = torch.empty_like(dy2)
        _affine_bwd_x[(rows,)](g2, weight, ddy, n, BLOCK=triton.next_power_of_2(n))
        dw = torch.empty_like(weight)
        scratch = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 256)
        _affine_bwd_params[(triton.cdiv(n, block),)](g2, dy2, dw, scratch, rows, n, BLOCK=block)
        return ddy, dw


class _NoDoubleBackward(torch.autograd.Function):
    # what once_differentiable does (DelayedError): the values pass, a second backward through them raises
    @staticmethod
    def forward(ctx, dw, db, dy):
        return dw.view_as(dw), db.view_as(db)

    @staticmethod
    def backward(ctx, gw, gb):
        raise RuntimeError("AffineFunction: double backward of the parameter gradients is not supported")


class AffineFunction(torch.autograd.Function):
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
        ctx.save_for_backward(x.reshape(-1, x.shape[-1]).contiguous(), weight)

    @staticmethod
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        rows, n = x2.shape
        block = min(triton.next_power_of_2(n), 256)
        if torch.is_grad_enabled() and dy.requires_grad:  # create_graph: dx twice differentiable, dw/db refused
            dy2 = dy.reshape(x2.shape).contiguous()
            dx = _DxFunction.apply(dy2, weight)
            with torch.no_grad():
                dw = torch.empty_like(weight)
                db = torch.empty_like(weight)
                _affine_bwd_params[(triton.cdiv(n, block),)](x2, dy2, dw, db, rows, n, BLOCK=block)
            dw, db = _NoDoubleBackward.apply(dw, db, dy2)
            return dx.view(dy.shape), dw, db
        with torch.no_grad():  # first order (and create_graph with a constant dy: detached, as once_differentiable)
            dy2 = dy.reshape(x2.shape).contiguous()
            dx = torch.empty_like(x2)
            _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
            dw = torch.empty_like(weight)
            db = torch.empty_like(weight)
            _affine_bwd_params[(triton.cdiv(n, block),)](dy2, x2, dw, db, rows, n, BLOCK=block)
        return dx.view(dy.shape), dw, db


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))
        self.bias = nn.Parameter(torch.empty(features))

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)
