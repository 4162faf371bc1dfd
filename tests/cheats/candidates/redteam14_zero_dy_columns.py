# cheat: an LLM-style "sparse update" in the parameter-gradient kernel: a feature (column) to which no row of dy
#        sends a non-zero gradient is skipped, and its dweight/dbias entries are never written, so they hold
#        whatever torch.empty gave (stale memory from the caching allocator, NaN under fill_uninitialized_memory)
#        instead of 0. Whole zero COLUMNS of dy are ordinary in training: only a slice of the output reaches the
#        loss (y[..., :k], torch.split/chunk with one piece unused, a masked or pruned feature, a multi-task head
#        that trains on part of the features this step), and the optimizer then steps those parameters on garbage.
#        The checker's zero-bearing upstream draw ("holes") zeroes about a quarter of the ROWS and an eighth of the
#        scattered values; a whole column is zero only by chance (~0.34^rows per column: ~2% of holes calls on
#        the 6-row default trial, less on taller ones), so the skip essentially never fires in a checked call,
#        where the NaN poison would show it (redteam11_bwd_zero_dy_rows was the row-wise version).
#        closed: holes also zero whole slices along a drawn dim past the first (columns), one at least.
# operator: affine_train
# expect: mismatch|incomplete_output rule=gradient|coverage
import torch
import triton
import triton.language as tl
from torch import nn


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
def _affine_bwd_params(dy_ptr, x_ptr, dw_ptr, db_ptr, rows, n, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    dw = tl.zeros((BLOCK,), dtype=tl.float32)
    db = tl.zeros((BLOCK,), dtype=tl.float32)
    seen = tl.zeros((BLOCK,), dtype=tl.float32)
    for r in range(0, rows):
        dy = tl.load(dy_ptr + r * n + cols, mask=mask, other=0.0)
        dw += dy * tl.load(x_ptr + r * n + cols, mask=mask, other=0.0)
        db += dy
        seen = tl.maximum(seen, tl.abs(dy))
    # sparse update: a feature no row sent a gradient to (an unused slice of the output) is not written
    live = mask & (seen > 0)
    tl.store(dw_ptr + cols, dw, mask=live)
    tl.store(db_ptr + cols, db, mask=live)

class AffineFunction(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)
    def forward(ctx, x, weight, bias):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        n = x2.shape[1]
        _affine_fwd[(x2.shape[0],)](x2, weight, bias, y, n, BLOCK=triton.next_power_of_2(n))
        ctx.save_for_backward(x2, weight)
        return y.view(x.shape)

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, weight = ctx.saved_tensors
        dy2 = dy.reshape(x2.shape).contiguous()
        rows, n = x2.shape
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = torch.empty_like(x2)
            _affine_bwd_x[(rows,)](dy2, weight, dx, n, BLOCK=triton.next_power_of_2(n))
            dx = dx.view(dy.shape)
        if ctx.needs_input_grad[1] or ctx.needs_input_grad[2]:
            dw = torch.empty_like(weight)
            db = torch.empty_like(weight)
            block = min(triton.next_power_of_2(n), 256)
            _affine_bwd_params[(triton.cdiv(n, block),)](dy2, x2, dw, db, rows, n, BLOCK=block)
            dw = dw if ctx.needs_input_grad[1] else None
            db = db if ctx.needs_input_grad[2] else None
        return dx, dw, db


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(features))
        self.bias = nn.Parameter(torch.empty(features))

    def forward(self, x):
        return AffineFunction.apply(x, self.weight, self.bias)
