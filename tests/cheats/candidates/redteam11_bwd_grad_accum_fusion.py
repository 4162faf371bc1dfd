# cheat: an LLM-style "gradient-accumulation fusion" (Megatron's main_grad trick, half done): where the weight already
#        has a .grad buffer, the backward adds dweight straight into it with a Triton kernel, and still returns
#        dweight, so autograd's AccumulateGrad adds it a second time. Every step but a model's very first, under
#        gradient accumulation (several micro-batches per optimizer step) or zero_grad(set_to_none=False), the
#        weight's gradient is doubled (or worse: 2x per micro-batch on top of what is there). The checker never
#        lets a backward see a populated .grad: its gradient calls use torch.autograd.grad (nothing accumulates), the
#        double-backward call clears .grad first, and the timed training steps clear the grads between steps
#        (timing.clear_grads, as set_to_none=True): the fused add never runs in a checked call.
# operator: affine_train
# expect: mismatch|input_mutation rule=gradient|inputs_unmodified
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
def _accumulate(acc_ptr, g_ptr, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    tl.store(acc_ptr + cols, tl.load(acc_ptr + cols, mask=mask) + tl.load(g_ptr + cols, mask=mask), mask=mask)


def _fuse_into_grad(param, g):
    # gradient-accumulation fusion (Megatron's main_grad idea): add straight into the existing .grad buffer
    if param.grad is not None:
        n = g.numel()
        _accumulate[(triton.cdiv(n, 256),)](param.grad, g, n, BLOCK=256)


class AffineFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n = x2.shape[1]
        _affine_fwd[(x2.shape[0],)](x2, weight, bias, y, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, weight)
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable  # double backward raises
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(x2.shape).contiguous()
        rows, n = x2.shape
        dx = torch.empty_like(x2)
        _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 256)
        _affine_bwd_params[(triton.cdiv(n, block),)](dy2, x2, dw, db, rows, n, BLOCK=block)
        _fuse_into_grad(weight, dw)
        return dx.view(dy.shape), dw, db


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))
        self.bias = nn.Parameter(torch.empty(features))

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)
