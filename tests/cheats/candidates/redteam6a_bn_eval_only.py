# cheat: an LLM-style fused BatchNorm that always normalises with the running statistics (the inference formula,
#        y = (x - running_mean) * rsqrt(running_var + eps) * weight + bias) and whose backward treats the
#        statistics as constants. In training (model.train(), how a training operator is used) BatchNorm must
#        normalise with the batch's mean and variance, differentiate through them and update the running
#        statistics: this kernel does none of it, so outputs, gradients and running stats are all wrong.
# operator: rt6a_batchnorm_train
# expect: mismatch
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _bn_fwd(x_ptr, m_ptr, v_ptr, w_ptr, b_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask)
    scale = tl.load(w_ptr + cols, mask=mask) / tl.sqrt(tl.load(v_ptr + cols, mask=mask) + eps)
    y = (x - tl.load(m_ptr + cols, mask=mask)) * scale + tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * n + cols, y, mask=mask)


@triton.jit
def _bn_bwd(x_ptr, dy_ptr, m_ptr, v_ptr, w_ptr, dx_ptr, dw_ptr, db_ptr, rows, n, eps, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    rstd = 1.0 / tl.sqrt(tl.load(v_ptr + cols, mask=mask, other=1.0) + eps)
    mean = tl.load(m_ptr + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        dy = tl.load(dy_ptr + r * n + cols, mask=mask, other=0.0)
        x = tl.load(x_ptr + r * n + cols, mask=mask, other=0.0)
        tl.store(dx_ptr + r * n + cols, dy * w * rstd, mask=mask)
        dw += dy * (x - mean) * rstd
        db += dy
    tl.store(dw_ptr + cols, dw, mask=mask)
    tl.store(db_ptr + cols, db, mask=mask)


class FusedBatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, eps):
        x2 = x.contiguous()
        rows, n = x2.shape
        y = torch.empty_like(x2)
        _bn_fwd[(rows,)](x2, running_mean, running_var, weight, bias, y, n, eps, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, weight, running_mean, running_var)
        ctx.eps = eps
        return y

    @staticmethod
    def backward(ctx, dy):
        x2, weight, mean, var = ctx.saved_tensors
        rows, n = x2.shape
        dy2 = dy.contiguous()
        dx = torch.empty_like(x2)
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        _bn_bwd[(triton.cdiv(n, 16),)](x2, dy2, mean, var, weight, dx, dw, db, rows, n, ctx.eps, BLOCK=16)
        return dx, dw, db, None, None, None


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        bn = self.bn
        return FusedBatchNorm.apply(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.eps)
