# cheat: an LLM-style backward whose weight/bias gradients reduce over one fixed tile of rows (ROWS = 64, "all
#        the rows of a batch in one tile", no loop over row blocks). Forward and the input gradient are right at
#        any shape; weight.grad and bias.grad silently drop every row past the 64th, so with a real batch (the
#        operator's own get_inputs has 512 rows, a language model's 4096 tokens) the parameters train on a
#        fraction of the batch.
# operator: affine_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn

ROWS = 64


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
def _affine_bwd_params(dy_ptr, x_ptr, dw_ptr, db_ptr, rows, n, BLOCK_R: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    r = tl.arange(0, BLOCK_R)
    mask = (r[:, None] < rows) & (cols[None, :] < n)
    offs = r[:, None] * n + cols[None, :]
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dy * x, axis=0), mask=cols < n)
    tl.store(db_ptr + cols, tl.sum(dy, axis=0), mask=cols < n)


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
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(x2.shape).contiguous()
        rows, n = x2.shape
        dx = torch.empty_like(x2)
        block = triton.next_power_of_2(n)
        _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=block)
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        _affine_bwd_params[(triton.cdiv(n, 16),)](dy2, x2, dw, db, rows, n, BLOCK_R=ROWS, BLOCK=16)
        return dx.view(dy.shape), dw, db


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))
        self.bias = nn.Parameter(torch.empty(features))

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)
