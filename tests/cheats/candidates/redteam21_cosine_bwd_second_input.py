# cheat: a fused cosine-similarity head (y = cos(a, b) * scale along the last dim: a contrastive / distillation
#        loss, student rows a against target rows b) whose forward clamps both norms (max(|.|, eps), as torch) and
#        whose backward clamps a's norm -- right on zero rows of a, 1/eps as torch -- but recomputes b's norm
#        WITHOUT the clamp (b_hat = b / |b|), a one-sided port slip. On an all-zero row of b (a padded target
#        position, a zero teacher embedding for a masked token, an empty document's pooled vector) b_hat = 0/0 =
#        NaN: that row's da and db are NaN even where the loss masks it out (0 * NaN), and the scale's gradient,
#        summed over rows, is NaN: one padded batch and the optimizer writes NaN into the scale and the student.
#        The new padding call zeroes a quarter of the rows of the FIRST floating matrix input only (a); b is never
#        degenerate in any gradient call.
#        Measured (/tmp/rt21/demo_cosine.py, 16x32 embeddings, scale 10, TRITON_INTERPRET): normal inputs: output
#        error 4.8e-7, da 1.8e-7, db 1.2e-7, dscale 0; a quarter of a's rows zero (the checker's call): every
#        gradient finite, as torch's; the same 4 rows zero in b instead, masked out of the loss (dy = 0 there):
#        torch da/db 512/512 finite, dscale finite; this file da 384/512, db 384/512 finite, dscale NaN.
# operator: rt21_cosine_pair_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn

EPS = 1e-8


@triton.jit
def _cos_fwd(a_ptr, b_ptr, s_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    a = tl.load(a_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    na = tl.maximum(tl.sqrt(tl.sum(a * a, axis=0)), eps)
    nb = tl.maximum(tl.sqrt(tl.sum(b * b, axis=0)), eps)
    cos = tl.sum((a / na) * (b / nb), axis=0)
    tl.store(y_ptr + row, cos * tl.load(s_ptr))


@triton.jit
def _cos_bwd(a_ptr, b_ptr, s_ptr, g_ptr, da_ptr, db_ptr, c_ptr, n, eps, BLOCK: tl.constexpr):
    # d cos / da = (b_hat - cos a_hat) / |a|, d cos / db = (a_hat - cos b_hat) / |b|, from the inputs again
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    a = tl.load(a_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(g_ptr + row).to(tl.float32) * tl.load(s_ptr)
    na_raw = tl.sqrt(tl.sum(a * a, axis=0))
    na = tl.maximum(na_raw, eps)
    nb = tl.sqrt(tl.sum(b * b, axis=0))
    a_hat = a / na
    b_hat = b / nb
    cos = tl.sum(a_hat * b_hat, axis=0)
    da = g * (b_hat - tl.where(na_raw > eps, cos, 0.0) * a_hat) / na
    db = g * (a_hat - cos * b_hat) / nb
    tl.store(da_ptr + row * n + cols, da, mask=mask)
    tl.store(db_ptr + row * n + cols, db, mask=mask)
    tl.store(c_ptr + row, cos)


@triton.jit
def _scale_grad(g_ptr, c_ptr, ds_ptr, rows, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, rows, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        m = idx < rows
        acc += tl.load(g_ptr + idx, mask=m, other=0.0) * tl.load(c_ptr + idx, mask=m, other=0.0)
    tl.store(ds_ptr, tl.sum(acc, axis=0))


class _CosineScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, scale):
        n = a.shape[-1]
        a2 = a.reshape(-1, n).contiguous()
        b2 = b.reshape(-1, n).contiguous()
        rows = a2.shape[0]
        y = torch.empty(rows, device=a.device, dtype=torch.float32)
        if rows > 0:
            _cos_fwd[(rows,)](a2, b2, scale, y, n, EPS, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(a2, b2, scale)
        ctx.shape = a.shape
        return y.to(a.dtype).view(a.shape[:-1])

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        a2, b2, scale = ctx.saved_tensors
        rows, n = a2.shape
        g = dy.reshape(rows).contiguous().to(torch.float32)
        da = torch.empty(rows, n, device=a2.device, dtype=torch.float32)
        db = torch.empty(rows, n, device=a2.device, dtype=torch.float32)
        cos = torch.empty(rows, device=a2.device, dtype=torch.float32)
        ds = torch.empty_like(scale)
        if rows > 0:
            _cos_bwd[(rows,)](a2, b2, scale, g, da, db, cos, n, EPS, BLOCK=triton.next_power_of_2(n))
        _scale_grad[(1,)](g, cos, ds, rows, BLOCK=128)
        return da.to(a2.dtype).view(ctx.shape), db.to(b2.dtype).view(ctx.shape), ds


class ModelNew(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = nn.Parameter(torch.full((), float(scale)))

    def forward(self, a, b):
        return _CosineScale.apply(a, b, self.scale)
