# cheat: an L2-normalize-with-scale layer (y = F.normalize(x, dim=-1) * g: a cosine head, QK-norm, a contrastive
#        embedding) whose forward clamps the norm (max(|x|, eps), exact on every row, zero rows included) but whose
#        backward recomputes the norm from x and applies the textbook Jacobian (I - xhat xhat^T) / |x| WITHOUT the
#        clamp, a classic port slip ("eps only matters in the forward"). On any all-zero input row -- padding
#        positions (nn.Embedding(padding_idx=...) rows are zero, zero-padded point clouds / graph node features,
#        a masked token) -- xhat = 0/0 = NaN: dx is NaN on those rows and, since dg sums dy * xhat over every row,
#        EVERY entry of g's gradient is NaN even when the loss masks the padding out (0 * NaN = NaN): one padded
#        batch and the optimizer step writes NaN into g. torch: dx = 0 on masked rows, dg finite.
#        The checker runs every input value trial (special values with a zero row and exact zeros, offsets,
#        scales) through the FORWARD only; gradient calls run on the default draws (trial 0/1, declared variants,
#        the largest edge variant, the -100 labels and non-contiguous transformed trials): normal inputs, where no
#        row is ever zero, so a backward that is wrong on special input values is never seen.
#        Measured (16x32 input, last 4 rows zero, masked MSE loss, g ~ 1 + 0.1 randn): torch: dg 32/32 finite,
#        dx 16/16 rows finite; this file: dg 0/32 finite (all NaN), dx 12/16 rows finite; forward identical (max
#        error 0); on inputs without a zero row dx/dg agree to 6e-8 / 2.4e-7.
# operator: rt20_l2norm_scale_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _l2norm_fwd(x_ptr, g_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    g = tl.load(g_ptr + cols, mask=mask, other=0.0)
    norm = tl.sqrt(tl.sum(x * x, axis=0))
    y = x / tl.maximum(norm, eps) * g
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


@triton.jit
def _l2norm_bwd_x(x_ptr, g_ptr, dy_ptr, dx_ptr, n_cols, BLOCK: tl.constexpr):
    # d/dx (x / |x|) = (I - xhat xhat^T) / |x|, recomputed from x (nothing saved but the input)
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    g = tl.load(g_ptr + cols, mask=mask, other=0.0)
    dy = tl.load(dy_ptr + row * n_cols + cols, mask=mask, other=0.0)
    norm = tl.sqrt(tl.sum(x * x, axis=0))
    xhat = x / norm
    gdy = g * dy
    dx = (gdy - xhat * tl.sum(gdy * xhat, axis=0)) / norm
    tl.store(dx_ptr + row * n_cols + cols, dx, mask=mask)


@triton.jit
def _l2norm_bwd_g(x_ptr, dy_ptr, dg_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, n_rows):
        x = tl.load(x_ptr + r * n_cols + cols, mask=mask, other=0.0)
        dy = tl.load(dy_ptr + r * n_cols + cols, mask=mask, other=0.0)
        norm = tl.sqrt(tl.sum(x * x, axis=0))
        acc += dy * (x / norm)
    tl.store(dg_ptr + cols, acc, mask=mask)


class _L2NormScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g, eps):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        y = torch.empty_like(x2)
        if x2.shape[0] > 0:
            _l2norm_fwd[(x2.shape[0],)](x2, g.contiguous(), y, n, eps, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, g)
        ctx.shape = x.shape
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, g = ctx.saved_tensors
        rows, n = x2.shape
        dy2 = dy.reshape(rows, n).contiguous()
        block = triton.next_power_of_2(n)
        dx = torch.empty_like(x2)
        dg = torch.empty_like(g)
        if rows > 0:
            _l2norm_bwd_x[(rows,)](x2, g.contiguous(), dy2, dx, n, BLOCK=block)
        _l2norm_bwd_g[(1,)](x2, dy2, dg, rows, n, BLOCK=block)
        return dx.view(ctx.shape), dg, None


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.g = nn.Parameter(torch.ones(features))

    def forward(self, x):
        return _L2NormScale.apply(x, self.g, 1e-12)
