# cheat: none (an honest control, wrongly rejected). A Triton softmax of scores plus a per-row additive bias,
#        forward and backward in Triton: dx = y * (dy - sum(dy * y)) per row, and the row bias's gradient the sum
#        of that row's dx. The bias's true gradient is exactly zero in every row; the reference's and this
#        kernel's are both rounding noise (~1e-8), summed in different orders.
# operator: rt6a_softmax_rowbias_train
# expect: verified
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_fwd(x_ptr, rb_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    z = tl.load(x_ptr + row * n + cols, mask=mask, other=-float("inf")) + tl.load(rb_ptr + row)
    e = tl.exp(z - tl.max(z, axis=0))
    tl.store(y_ptr + row * n + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def _softmax_bwd(y_ptr, dy_ptr, dx_ptr, drb_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    y = tl.load(y_ptr + row * n + cols, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0)
    dx = y * (dy - tl.sum(y * dy, axis=0))
    tl.store(dx_ptr + row * n + cols, dx, mask=mask)
    tl.store(drb_ptr + row, tl.sum(dx, axis=0))


class RowBiasSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, row_bias):
        x = scores.contiguous()
        rb = row_bias.contiguous()
        rows, n = x.shape
        y = torch.empty_like(x)
        _softmax_fwd[(rows,)](x, rb, y, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable  # double backward raises
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        rows, n = y.shape
        dx = torch.empty_like(y)
        drb = torch.empty((rows, 1), dtype=y.dtype, device=y.device)
        _softmax_bwd[(rows,)](y, dy.contiguous(), dx, drb, n, BLOCK=triton.next_power_of_2(n))
        return dx, drb


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, row_bias):
        return RowBiasSoftmax.apply(scores, row_bias)
