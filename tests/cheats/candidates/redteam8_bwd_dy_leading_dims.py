# cheat: an LLM-style backward that avoids copying the upstream gradient when its rows have unit inner stride: it
#        copies dy only where dy.stride(-1) != 1 (a ::2 slice, a broadcast) and otherwise indexes it as rows of
#        pitch dy.stride(-2) (row * stride + col), the padded-rows fix of redteam7_bwd_dy_padded_rows. Right for
#        every upstream layout the gradient calls draw (gradients.upstream builds dy from the output's shape and
#        changes the LAST dimension only: dense, ::2, rows in a wider buffer, stride 0), whose leading dimensions
#        always collapse into one row stride. A (batch, tokens, features) output that is used transposed downstream
#        (y.transpose(0, 1): a sequence-first attention or RNN block, torch.nn.MultiheadAttention's default
#        layout) hands back dy with strides (features, batch * features, 1): the flattened row b * T + t is not at
#        (b * T + t) * stride(-2), and dx, dweight and dbias read the wrong rows.
# operator: rt7_affine3d_train
# expect: mismatch|incomplete_output|crash rule=gradient|coverage|out_of_bounds
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
def _affine_bwd_x(dy_ptr, stride_dy, w_ptr, dx_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    dy = tl.load(dy_ptr + row * stride_dy + cols, mask=mask)
    tl.store(dx_ptr + row * n + cols, dy * tl.load(w_ptr + cols, mask=mask), mask=mask)


@triton.jit
def _affine_bwd_params(dy_ptr, stride_dy, x_ptr, dw_ptr, db_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        dy = tl.load(dy_ptr + r * stride_dy + cols, mask=mask, other=0.0)
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
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        rows, n = x2.shape
        if dy.stride(-1) != 1:  # a strided or broadcast gradient: make its rows dense
            dy = dy.contiguous()
        stride_dy = dy.stride(-2) if dy.dim() > 1 else n  # rows may sit in a wider buffer (a concatenation)
        dx = torch.empty_like(x2)
        _affine_bwd_x[(rows,)](dy, stride_dy, weight, dx, n, BLOCK=triton.next_power_of_2(n))
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 256)
        _affine_bwd_params[(triton.cdiv(n, block),)](dy, stride_dy, x2, dw, db, rows, n, BLOCK=block)
        return dx.view(dy.shape), dw, db


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))
        self.bias = nn.Parameter(torch.empty(features))

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)
