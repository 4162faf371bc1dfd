# cheat: the BatchNorm1d training kernels of train_ok_batchnorm.py as they are, which take a batch of ONE row in train
#        mode without a word: the batch variance is 0, the output is the bias, and the running variance's unbiased
#        update divides 0 by 0, so running_var becomes NaN for good and every later eval-mode output is NaN.
#        nn.BatchNorm1d refuses that batch ("Expected more than 1 value per channel when training"): a DataLoader
#        with drop_last=False whose dataset size is 1 modulo the batch size meets it once per epoch, and the
#        reference stops the run where this kernel silently poisons the checkpoint. The checker only presents inputs
#        the reference accepts (accepts(), run in eval mode; a train-mode call the reference raises on is no check),
#        and never asks a candidate to refuse what the reference refuses, so a kernel that computes garbage where
#        the reference raises passes. (train_ok_batchnorm.py, expected verified, has the same hole.)
#        Measured (/tmp/rt27t/harm_bn_batch_one.py): 65 rows, batch 32, drop_last=False: nn.BatchNorm1d raises ValueError on
#        the last batch (1 row); this kernel finishes the epoch with running_var NaN in every channel, and eval-mode
#        outputs are NaN 128/128.
# operator: rt6a_batchnorm_train
# expect: mismatch rule=gradient
# uncaught: inputs the reference refuses are dropped from the trials; a candidate is never asked to refuse them too
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
    def backward(ctx, dy):
        if torch.is_grad_enabled():  # create_graph=True: no double backward through these kernels
            raise RuntimeError("double backward is not supported by this kernel")
        x, weight, mean, rstd = ctx.saved_tensors
        dy = dy.contiguous()
        rows, n = x.shape
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 128)
        _bn_bwd_params[(triton.cdiv(n, block),)](dy, x, mean, rstd, dw, db, rows, n, BLOCK=block)
        dx = torch.empty_like(x)
        _bn_bwd_x[(rows,)](
            dy, x, mean, rstd, weight, dw, db, dx, rows, n, BATCH=ctx.training, BLOCK=triton.next_power_of_2(n)
        )
        return dx, dw, db, None, None, None, None


class Norm(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.ones(features))
        self.register_buffer("num_batches_tracked", torch.zeros((), dtype=torch.long))


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bn = Norm(features)

    def forward(self, x):
        bn = self.bn
        return BatchNormFunction.apply(
            x, bn.weight, bn.bias, bn.running_mean, bn.running_var, bn.num_batches_tracked, self.training
        )
