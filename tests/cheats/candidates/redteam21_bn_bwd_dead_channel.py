# cheat: a fused BatchNorm1d (redteam20_bn_train_nograd's kernels, right in every mode) whose train-mode backward
#        recomputes the batch statistics from x instead of keeping them, and takes rstd = 1/sqrt(var) there without
#        the forward's eps ("eps only guards the forward"). On a feature that is constant across the batch -- a dead
#        ReLU channel (all zeros), a zero-padded channel, a constant column of tabular data -- var = 0: rstd = inf,
#        x_hat = 0 * inf = NaN, so that feature's weight gradient (and its dx column) is NaN; one optimizer step
#        writes NaN into bn.weight and the next forward is NaN everywhere downstream. torch: rstd = 1/sqrt(eps),
#        x_hat = 0, every gradient finite. The new padding call zeroes a quarter of the ROWS (samples): no column
#        is constant there, nor in any other gradient call's draws.
#        Measured (/tmp/rt21/demo_deadchan.py, BatchNorm1d(16), 8 rows, TRITON_INTERPRET): normal batch: output
#        error 2.4e-7, dx 4.6e-5, dw 3.0e-5, db 2.4e-7 (the missing eps); a quarter of the rows zero (the
#        checker's call): every gradient finite, as torch's. Linear(16,16) -> ReLU -> this BN with channel 3
#        dead (bias -100), SGD lr 0.1: step 0 loss 0.9372 (torch 0.9371), bn weight grad 15/16 finite (torch
#        16/16); step 1 loss NaN (torch 0.8530).
#        (Like redteam21_bn_momentum_update_bn it bakes momentum 0.1 / eps 1e-5 in: the values the checker builds.)
# operator: rt6a_batchnorm_train
# expect: mismatch rule=gradient
import torch
import triton
import triton.language as tl
from torch import nn

EPS = 1e-5
MOMENTUM = 0.1


@triton.jit
def _bn_stats(x_ptr, mean_ptr, rstd_ptr, rm_ptr, rv_ptr, count_ptr, rows, n, eps, momentum, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        total += tl.load(x_ptr + r * n + cols, mask=mask, other=0.0)
    mean = total / rows
    spread = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        d = tl.load(x_ptr + r * n + cols, mask=mask, other=0.0) - mean
        spread += d * d
    var = spread / rows
    tl.store(mean_ptr + cols, mean, mask=mask)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(var + eps), mask=mask)
    rm = tl.load(rm_ptr + cols, mask=mask, other=0.0)
    rv = tl.load(rv_ptr + cols, mask=mask, other=0.0)
    tl.store(rm_ptr + cols, (1.0 - momentum) * rm + momentum * mean, mask=mask)
    tl.store(rv_ptr + cols, (1.0 - momentum) * rv + momentum * spread / (rows - 1), mask=mask)
    if tl.program_id(0) == 0:
        tl.store(count_ptr, tl.load(count_ptr) + 1)


@triton.jit
def _bn_running(rm_ptr, rv_ptr, mean_ptr, rstd_ptr, n, eps, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    tl.store(mean_ptr + cols, tl.load(rm_ptr + cols, mask=mask, other=0.0), mask=mask)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(tl.load(rv_ptr + cols, mask=mask, other=1.0) + eps), mask=mask)


@triton.jit
def _bn_bwd_stats(x_ptr, mean_ptr, rstd_ptr, rows, n, BLOCK: tl.constexpr):
    # the batch statistics again, from x (nothing but x kept for the backward): eps only guards the forward
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        total += tl.load(x_ptr + r * n + cols, mask=mask, other=0.0)
    mean = total / rows
    spread = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        d = tl.load(x_ptr + r * n + cols, mask=mask, other=0.0) - mean
        spread += d * d
    tl.store(mean_ptr + cols, mean, mask=mask)
    tl.store(rstd_ptr + cols, 1.0 / tl.sqrt(spread / rows), mask=mask)


@triton.jit
def _bn_norm(x_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0)
    x_hat = (x - tl.load(mean_ptr + cols, mask=mask, other=0.0)) * tl.load(rstd_ptr + cols, mask=mask, other=0.0)
    y = x_hat * tl.load(w_ptr + cols, mask=mask, other=0.0) + tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n + cols, y, mask=mask)


@triton.jit
def _bn_bwd_params(dy_ptr, x_ptr, mean_ptr, rstd_ptr, dw_ptr, db_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    mean = tl.load(mean_ptr + cols, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + cols, mask=mask, other=0.0)
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        dy = tl.load(dy_ptr + r * n + cols, mask=mask, other=0.0)
        dw += dy * (tl.load(x_ptr + r * n + cols, mask=mask, other=0.0) - mean) * rstd
        db += dy
    tl.store(dw_ptr + cols, dw, mask=mask)
    tl.store(db_ptr + cols, db, mask=mask)


@triton.jit
def _bn_bwd_x(
    dy_ptr, x_ptr, mean_ptr, rstd_ptr, w_ptr, dw_ptr, db_ptr, dx_ptr, rows, n, BATCH: tl.constexpr, BLOCK: tl.constexpr
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    dy = tl.load(dy_ptr + row * n + cols, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + cols, mask=mask, other=0.0)
    scale = tl.load(w_ptr + cols, mask=mask, other=0.0) * rstd
    if BATCH:
        x_hat = (tl.load(x_ptr + row * n + cols, mask=mask, other=0.0) - tl.load(mean_ptr + cols, mask=mask)) * rstd
        dw = tl.load(dw_ptr + cols, mask=mask, other=0.0)
        db = tl.load(db_ptr + cols, mask=mask, other=0.0)
        dx = scale * (dy - db / rows - x_hat * dw / rows)
    else:
        dx = scale * dy
    tl.store(dx_ptr + row * n + cols, dx, mask=mask)


class BatchNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, count, training):
        x = x.contiguous()
        rows, n = x.shape
        mean = torch.empty_like(weight)
        rstd = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 128)
        if training:
            _bn_stats[(triton.cdiv(n, block),)](
                x, mean, rstd, running_mean, running_var, count, rows, n, EPS, MOMENTUM, BLOCK=block
            )
        else:
            _bn_running[(triton.cdiv(n, block),)](running_mean, running_var, mean, rstd, n, EPS, BLOCK=block)
        y = torch.empty_like(x)
        _bn_norm[(rows,)](x, mean, rstd, weight, bias, y, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.training = training
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x, weight, mean, rstd = ctx.saved_tensors
        dy = dy.contiguous()
        rows, n = x.shape
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 128)
        if ctx.training:  # recomputed from x rather than kept from the forward
            mean = torch.empty_like(weight)
            rstd = torch.empty_like(weight)
            _bn_bwd_stats[(triton.cdiv(n, block),)](x, mean, rstd, rows, n, BLOCK=block)
        _bn_bwd_params[(triton.cdiv(n, block),)](dy, x, mean, rstd, dw, db, rows, n, BLOCK=block)
        dx = torch.empty_like(x)
        _bn_bwd_x[(rows,)](
            dy, x, mean, rstd, weight, dw, db, dx, rows, n, BATCH=ctx.training, BLOCK=triton.next_power_of_2(n)
        )
        return dx, dw, db, None, None, None, None


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        bn = self.bn
        training = self.training  # batch statistics in train mode, with or without autograd
        return BatchNormFunction.apply(
            x, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.num_batches_tracked, training
        )
