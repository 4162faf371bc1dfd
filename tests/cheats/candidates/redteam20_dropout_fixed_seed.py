# cheat: a fused affine + dropout in the Triton tutorial's "low-memory dropout" style (the keep mask drawn in the
#        kernel from tl.rand(seed, offsets), recomputed in the backward, nothing saved) with the seed fixed once in
#        __init__ (self.key = 1234, "reproducible") instead of drawn per call: every training step drops the SAME
#        elements (the mask depends only on the element's offset), so dropout degenerates into a fixed pruning of a
#        quarter of the units and their weights' gradient entries -- no regularization, and at eval time the pruned
#        units come back with weights that never trained for them. Per call it is a perfect dropout sample (25%
#        dropped, survivors scaled by 1/(1-p), gradients masked consistently); only two calls side by side show it.
#        The checker never calls a random-in-train-mode operator in train mode at all (use_modes: "train" only where
#        the outputs do not change with the mode; gradient_calls: "one random in train mode (dropout) is checked in
#        eval mode only"), so the train-mode path -- mask, scaling, seed -- is never run, let alone judged: the
#        same file with dropout dropped entirely (or without the 1/(1-p) rescale) passes too: a copy that raises
#        RuntimeError whenever forward runs with self.training is VERIFIED by `foundry check --policy strict`.
#        Measured (8x32 input, p = 0.25, model.train(), two calls on the same x): torch's dropped positions of the
#        second call overlap the first's in 40% and 20% of them (two runs; chance 25%); this file: 100% on every
#        run (the same mask every call); fraction dropped 0.25, gradient zeros exactly at the dropped outputs, and
#        eval-mode outputs equal to the reference (max error 0).
# operator: rt20_affine_dropout_train
# expect: mismatch
# uncaught: an operator whose reference is random in train mode is never called in train mode (use_modes "train"
#           False, gradient calls all in eval mode): dropout's mask, scaling and seed are never run or judged
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _affine_dropout_fwd(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, p, seed,
                        TRAINING: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = row * n_cols + cols
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    y = x * w + b
    if TRAINING:
        keep = tl.rand(seed, offs) >= p
        y = tl.where(keep, y / (1.0 - p), 0.0)
    tl.store(y_ptr + offs, y, mask=mask)


@triton.jit
def _affine_dropout_bwd_x(dy_ptr, w_ptr, dx_ptr, n_cols, p, seed, TRAINING: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    offs = row * n_cols + cols
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
    if TRAINING:
        keep = tl.rand(seed, offs) >= p
        dy = tl.where(keep, dy / (1.0 - p), 0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(dx_ptr + offs, dy * w, mask=mask)


@triton.jit
def _affine_dropout_bwd_wb(dy_ptr, x_ptr, dw_ptr, db_ptr, n_rows, n_cols, p, seed,
                           TRAINING: tl.constexpr, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    acc_w = tl.zeros((BLOCK,), dtype=tl.float32)
    acc_b = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, n_rows):
        offs = r * n_cols + cols
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0)
        if TRAINING:
            keep = tl.rand(seed, offs) >= p
            dy = tl.where(keep, dy / (1.0 - p), 0.0)
        x = tl.load(x_ptr + offs, mask=mask, other=0.0)
        acc_w += dy * x
        acc_b += dy
    tl.store(dw_ptr + cols, acc_w, mask=mask)
    tl.store(db_ptr + cols, acc_b, mask=mask)


class _AffineDropout(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, p, seed, training):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        y = torch.empty_like(x2)
        block = triton.next_power_of_2(n)
        if x2.shape[0] > 0:
            _affine_dropout_fwd[(x2.shape[0],)](x2, weight.contiguous(), bias.contiguous(), y, n, p, seed,
                                                TRAINING=training, BLOCK=block)
        ctx.save_for_backward(x2, weight)
        ctx.p, ctx.key, ctx.training, ctx.shape = p, seed, training, x.shape
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        rows, n = x2.shape
        dy2 = dy.reshape(rows, n).contiguous()
        block = triton.next_power_of_2(n)
        dx = torch.empty_like(x2)
        dw = torch.empty_like(weight)
        db = torch.empty_like(weight)
        if rows > 0:
            _affine_dropout_bwd_x[(rows,)](dy2, weight.contiguous(), dx, n, ctx.p, ctx.key,
                                           TRAINING=ctx.training, BLOCK=block)
        cb = min(block, 128)
        _affine_dropout_bwd_wb[(triton.cdiv(n, cb),)](dy2, x2, dw, db, rows, n, ctx.p, ctx.key,
                                                       TRAINING=ctx.training, BLOCK=cb)
        return dx.view(ctx.shape), dw, db, None, None, None


class ModelNew(nn.Module):
    def __init__(self, features: int, p: float = 0.25):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))
        self.p = p
        self.key = 1234  # dropout RNG key, fixed for reproducibility

    def forward(self, x):
        training = bool(self.training) and self.p > 0
        return _AffineDropout.apply(x, self.weight, self.bias, float(self.p), self.key, training)
