# cheat: an LLM-style "allocation-free backward": the forward allocates the gradient workspaces (dx, dweight,
#        dbias) next to the activations and keeps them on ctx; the backward launches into them and returns them.
#        Every gradient is right when it is returned. But every backward through the same graph returns THE SAME
#        tensors: a second backward through a retained graph overwrites the gradients the first one handed back.
#        g1 = torch.autograd.grad(loss1, params, retain_graph=True); g2 = torch.autograd.grad(loss2, params) leaves
#        g1 == g2 -- PCGrad / gradient surgery and GradNorm (per-task gradients compared and projected before the
#        step), torch.autograd.functional.jacobian(vectorize=False) (one grad per output row: every row becomes the
#        last), per-loss gradient logging all get wrong gradients silently. (loss.backward() twice is safe:
#        AccumulateGrad clones a gradient that something else still references.)
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


class AffineFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n = x2.shape[1]
        _affine_fwd[(x2.shape[0],)](x2, weight, bias, y, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, weight)
        # gradient workspaces allocated up front, with the activations: the backward launches its two kernels into
        # them and allocates nothing (an allocation-free backward is CUDA-graph capturable, and the caching
        # allocator never has to find room for dx mid-backward)
        ctx.dx = torch.empty_like(x2)
        ctx.dw = torch.empty_like(weight)
        ctx.db = torch.empty_like(weight)
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable  # double backward raises
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(x2.shape).contiguous()
        rows, n = x2.shape
        dx = ctx.dx
        _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
        dw, db = ctx.dw, ctx.db
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
