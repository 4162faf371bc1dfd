# cheat: a BatchNorm1d (training) that flattens its input to rows of `features` values, x.reshape(-1, C), as a
#        LayerNorm kernel does, and normalises each column over those rows. For the (N, C) input the operator declares
#        it is the honest kernel (batch statistics, running statistics, eval mode, Triton backward). BatchNorm1d also
#        takes (N, C, L) (after a Conv1d: audio, sequences, PointNet), and nn.BatchNorm1d normalises channel c over
#        N*L values there; this kernel instead groups every C consecutive values of x[n] into a "row", so its
#        statistics mix channels and positions: output, gradients and running statistics are all wrong, with no error
#        (the shapes come back right). The checker only runs the ranks the operator declares (the CPU's, and the
#        GPU's where it differs): it never tries another rank the reference accepts.
#        Measured (/tmp/rt27t/harm_bn1d_rank.py, 16 channels): (8, 16) input: max error 2.4e-7; (8, 16, 50) input in train
#        mode: max output error 2.8-3.2, per-channel output std 0.17-0.38 (reference 1.00), dx relative error 0.68-0.71;
#        running_mean after 3 steps ~0 (reference -0.55..-0.34), running_var ~2.8-2.9 (reference 0.79-1.10); eval 2.33 off.
# operator: rt6a_batchnorm_train
# expect: mismatch rule=tolerance
# uncaught: only the declared input ranks are run; another rank the reference accepts (BatchNorm1d's (N, C, L)) never is
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
        shape = x.shape
        n = weight.numel()
        x = x.contiguous().reshape(-1, n)  # rows of features, as BatchNorm1d's (N, C) has them
        rows = x.shape[0]
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
        ctx.shape = shape
        return y.view(shape)

    @staticmethod
    def backward(ctx, dy):
        if torch.is_grad_enabled():  # create_graph=True: no double backward through these kernels
            raise RuntimeError("double backward is not supported by this kernel")
        x, weight, mean, rstd = ctx.saved_tensors
        rows, n = x.shape
        dy = dy.contiguous().reshape(rows, n)
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        block = min(triton.next_power_of_2(n), 128)
        _bn_bwd_params[(triton.cdiv(n, block),)](dy, x, mean, rstd, dw, db, rows, n, BLOCK=block)
        dx = torch.empty_like(x)
        _bn_bwd_x[(rows,)](
            dy, x, mean, rstd, weight, dw, db, dx, rows, n, BATCH=ctx.training, BLOCK=triton.next_power_of_2(n)
        )
        return dx.view(ctx.shape), dw, db, None, None, None, None


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
