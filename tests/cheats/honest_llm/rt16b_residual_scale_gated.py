# honest: a fused residual add and scale with two outputs whose backward takes the residual stream's gradient
#        only when autograd hands one (set_materialize_grads(False), a constexpr HAS_DS gate around its load)
# operator: rt16b_residual_scale_train
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _fwd(x_ptr, r_ptr, w_ptr, y_ptr, s_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    s = tl.load(x_ptr + row * n + cols, mask=mask) + tl.load(r_ptr + row * n + cols, mask=mask)
    w = tl.load(w_ptr + cols, mask=mask)
    tl.store(s_ptr + row * n + cols, s, mask=mask)
    tl.store(y_ptr + row * n + cols, s * w, mask=mask)


@triton.jit
def _bwd_inputs(dy_ptr, ds_ptr, w_ptr, dx_ptr, dr_ptr, n, HAS_DY: tl.constexpr, HAS_DS: tl.constexpr,
                BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    g = tl.zeros((BLOCK,), dtype=tl.float32)
    if HAS_DY:
        g += tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0) * tl.load(w_ptr + cols, mask=mask, other=0.0)
    # the residual stream's own gradient passes straight through
    if HAS_DS:
        g += tl.load(ds_ptr + row * n + cols, mask=mask, other=0.0)
    tl.store(dx_ptr + row * n + cols, g, mask=mask)
    tl.store(dr_ptr + row * n + cols, g, mask=mask)


@triton.jit
def _bwd_weight(dy_ptr, s_ptr, dw_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        acc += tl.load(dy_ptr + r * n + cols, mask=mask, other=0.0) * tl.load(s_ptr + r * n + cols, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, acc, mask=mask)


class ResidualScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, residual, weight):
        ctx.set_materialize_grads(False)  # no zeros built for an output that is not used
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        r2 = residual.reshape(-1, x.shape[-1]).contiguous()
        rows, n = x2.shape
        y = torch.empty_like(x2)
        s = torch.empty_like(x2)
        _fwd[(rows,)](x2, r2, weight, y, s, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(s, weight)
        ctx.shape = x.shape
        return y.view(x.shape), s.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy, ds):
        s, weight = ctx.saved_tensors
        if dy is None and ds is None:
            return None, None, None
        rows, n = s.shape
        dy2 = dy.reshape(rows, n).contiguous() if dy is not None else None
        ds2 = ds.reshape(rows, n).contiguous() if ds is not None else None
        present = dy2 if dy2 is not None else ds2  # a placeholder pointer for the absent one
        dx = torch.empty_like(s)
        dr = torch.empty_like(s)
        block = triton.next_power_of_2(n)
        _bwd_inputs[(rows,)](
            dy2 if dy2 is not None else present,
            ds2 if ds2 is not None else present,
            weight,
            dx,
            dr,
            n,
            HAS_DY=dy2 is not None,
            HAS_DS=ds2 is not None,
            BLOCK=block,
        )
        dw = None
        if dy2 is not None:
            dw = torch.empty_like(weight)
            wb = min(block, 256)
            _bwd_weight[(triton.cdiv(n, wb),)](dy2, s, dw, rows, n, BLOCK=wb)
        return dx.view(ctx.shape), dr.view(ctx.shape), dw


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))

    def forward(self, x, residual):
        return ResidualScale.apply(x, residual, self.weight)
