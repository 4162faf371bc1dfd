# cheat: an LLM-style "broadcast upstream" fast path in the backward: when dy's last stride is 0 it is taken for ONE
#        value broadcast everywhere (what loss = y.sum() hands back) and only dy[0] is read. A stride of 0 in the last
#        dimension alone is as common: a readout that sums or averages over the features (y.sum(-1), y.mean(-1), a
#        per-row score) hands back dy = g[:, None].expand(rows, n), strides (1, 0), one value PER ROW. There every
#        row's dx and the parameters' gradients use row 0's value. The checker's only stride-0 upstream is the
#        "expanded" layout of gradients.upstream: draw(()).expand(shape), every stride 0, one value, where reading
#        dy[0] is right.
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
def _affine_bwd_scalar(dy_ptr, x_ptr, w_ptr, dx_ptr, dw_ptr, db_ptr, rows, n, BLOCK: tl.constexpr):
    # one upstream value g for every element: dx = g * w, dw = g * sum_r x, db = g * rows
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    g = tl.load(dy_ptr)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    xs = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        tl.store(dx_ptr + r * n + cols, g * w, mask=mask)
        xs += tl.load(x_ptr + r * n + cols, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, g * xs, mask=mask)
    tl.store(db_ptr + cols, g * rows + tl.zeros((BLOCK,), dtype=tl.float32), mask=mask)


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
        rows, n = x2.shape
        if dy.stride(-1) == 0:  # a broadcast upstream (loss = y.sum() / y.mean()): one value, never materialised
            dx = torch.empty_like(x2)
            dw = torch.empty_like(weight)
            db = torch.empty_like(weight)
            block = min(triton.next_power_of_2(n), 256)
            _affine_bwd_scalar[(triton.cdiv(n, block),)](dy, x2, weight, dx, dw, db, rows, n, BLOCK=block)
            return dx.view(dy.shape), dw, db
        dy2 = dy.reshape(x2.shape).contiguous()
        rows, n = x2.shape
        dx = torch.empty_like(x2)
        _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
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
