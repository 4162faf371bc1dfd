# honest: torch.autograd.Function whose forward and backward launch Triton kernels, called via .apply
# operator: softmax_fixed
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _softmax_fwd(X, Y, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(Y + row * stride + cols, y, mask=mask)


@triton.jit
def _softmax_bwd(DY, Y, DX, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0)
    y = tl.load(Y + row * stride + cols, mask=mask, other=0.0)
    dot = tl.sum(dy * y, axis=0)
    tl.store(DX + row * stride + cols, y * (dy - dot), mask=mask)


class TritonSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        shape = x.shape
        x2d = x.reshape(-1, shape[-1]).contiguous()
        n_rows, n_cols = x2d.shape
        y = torch.empty_like(x2d)
        BLOCK = triton.next_power_of_2(n_cols)
        _softmax_fwd[(n_rows,)](x2d, y, x2d.stride(0), n_cols, BLOCK=BLOCK)
        ctx.save_for_backward(y)
        ctx.BLOCK = BLOCK
        return y.view(shape)

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        dy = grad_out.reshape(y.shape).contiguous()
        dx = torch.empty_like(y)
        _softmax_bwd[(y.shape[0],)](dy, y, dx, y.stride(0), y.shape[1], BLOCK=ctx.BLOCK)
        return dx.view(grad_out.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return TritonSoftmax.apply(x)
