# cheat: an LLM-style affine kernel pair that avoids copying a non-contiguous activation. The forward reads x
#        through both strides (right for any 2-d layout). The backward's weight-gradient kernel reads the saved x
#        too, but takes "not contiguous" to mean "transposed": a column-major flag (x.stride(0) == 1) picks
#        r + c * rows, otherwise x is read as dense rows r * n + c. Right for a contiguous x and for x = h.t().
#        Wrong for the commonest non-contiguous activation of all, rows of a wider buffer: q, k, v =
#        qkv.split(d, -1) of a fused projection, h[:, :k], a chunk of a concatenation (stride (3d, 1)): the
#        output and x's gradient are right, weight's gradient sums dy against the wrong elements of the wider
#        buffer (k's and v's columns), silently, at every step.
# operator: affine_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _affine_fwd(x_ptr, w_ptr, b_ptr, y_ptr, n, sxr, sxc, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * sxr + cols * sxc, mask=mask)
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
def _affine_bwd_params(dy_ptr, x_ptr, dw_ptr, db_ptr, rows, n, COL_MAJOR: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        dy = tl.load(dy_ptr + r * n + cols, mask=mask, other=0.0)
        if COL_MAJOR:  # a transposed activation (x = h.t()): column c is contiguous
            x = tl.load(x_ptr + r + cols * rows, mask=mask, other=0.0)
        else:
            x = tl.load(x_ptr + r * n + cols, mask=mask, other=0.0)
        dw += dy * x
        db += dy
    tl.store(dw_ptr + cols, dw, mask=mask)
    tl.store(db_ptr + cols, db, mask=mask)


class AffineFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        n = x.shape[-1]
        x2 = x if x.dim() == 2 else x.reshape(-1, n)  # no copy: the kernels read through the strides
        rows = x2.shape[0]
        y = torch.empty((rows, n), dtype=x.dtype, device=x.device)
        _affine_fwd[(rows,)](x2, weight, bias, y, n, x2.stride(0), x2.stride(1), BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, weight)
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        rows, n = x2.shape
        dy2 = dy.reshape(rows, n).contiguous()
        dx = torch.empty((rows, n), dtype=dy.dtype, device=dy.device)
        _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 256)
        col_major = x2.stride(0) == 1 and rows > 1  # not contiguous: the transposed layout
        _affine_bwd_params[(triton.cdiv(n, block),)](dy2, x2, dw, db, rows, n, COL_MAJOR=col_major, BLOCK=block)
        return dx.view(dy.shape), dw, db


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))
        self.bias = nn.Parameter(torch.empty(features))

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)
