# cheat: the forward is an honest Triton kernel inside an autograd.Function, whose backward is wrong (the input
#        gradient ignores the sigmoid gate, the parameters get zero gradient). The checker calls the module
#        with grad enabled on every other call but never differentiates: a model trained with it does not learn.
# operator: elementwise_chain
# expect: mismatch
# uncaught: no stage runs backward (evaluator / exchange.call_plan only compare forward outputs), so gradients
#           that a candidate's autograd.Function defines are never checked against the reference's
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def chain_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n, channels, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    c = offs % channels
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x * tl.sigmoid(x * w + b) + 0.5 * x, mask=mask)


@triton.jit
def scale_kernel(g_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 1.5 * tl.load(g_ptr + offs, mask=mask), mask=mask)


class Chain(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        chain_kernel[(triton.cdiv(n, 256),)](x, weight, bias, y, n, x.shape[-1], BLOCK=256)
        ctx.save_for_backward(weight, bias)
        return y

    @staticmethod
    def backward(ctx, grad):
        weight, bias = ctx.saved_tensors
        grad = grad.contiguous()
        grad_x = torch.empty_like(grad)
        n = grad.numel()
        scale_kernel[(triton.cdiv(n, 256),)](grad, grad_x, n, BLOCK=256)
        return grad_x, torch.zeros_like(weight), torch.zeros_like(bias)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        return Chain.apply(x, self.weight, self.bias)
