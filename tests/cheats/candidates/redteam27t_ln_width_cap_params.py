# cheat: a fused LayerNorm (training) whose row statistics are taken over the first tile of the row only: the tile
#        is min(next_power_of_2(hidden), 4096) columns, and the normalisation is then applied to every tile of the
#        row. At every hidden size up to 4096 the tile is the whole row and forward and backward are exact; at 5120
#        (Llama-13B), 8192 (Llama-2-70B), 12288 (GPT-3) the mean and variance come from the first 4096 features
#        only, and every output and gradient is off. The checker runs a module only at the constructor arguments
#        it declares (hidden 32 on the CPU, 2048 on a GPU; the full-size build is judged for its initial state
#        only), and its "wider than declared" edge trial (evaluator.widest) is skipped for an operator with
#        parameters or buffers, so no checked call reaches a second tile.
#        Measured (/tmp/rt27t/harm_ln_width.py, interpreter, 4 rows, against nn.LayerNorm on the same state): hidden 32,
#        2048, 4096: max output error <= 9.5e-7; hidden 5120: output 0.97, dx 0.50, dweight 2.8; hidden 8192: output 3.6,
#        dx 2.0, dweight 8.7.
# operator: rt22_ln_train
# expect: mismatch rule=tolerance
# uncaught: a module with parameters is run only at its declared constructor arguments, and the wider-than-declared edge
#        trial is skipped for operators with state, so a per-row tile capped above the declared width is never crossed
import torch
import triton
import triton.language as tl
from torch import nn

MAX_TILE = 4096


@triton.jit
def _ln_fwd(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n, m, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    first = cols < m
    x = tl.load(x_ptr + row * n + cols, mask=first, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / m
    xc = tl.where(first, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / m
    r = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, r)
    for start in range(0, n, BLOCK):
        c = start + cols
        mask = c < n
        xx = tl.load(x_ptr + row * n + c, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * n + c, (xx - mean) * r * w + b, mask=mask)


@triton.jit
def _ln_bwd_x(x_ptr, w_ptr, dy_ptr, dx_ptr, mean_ptr, rstd_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mean = tl.load(mean_ptr + row)
    r = tl.load(rstd_ptr + row)
    s1 = tl.zeros((BLOCK,), dtype=tl.float32)
    s2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n, BLOCK):
        c = start + cols
        mask = c < n
        x = tl.load(x_ptr + row * n + c, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * n + c, mask=mask, other=0.0).to(tl.float32)
        xhat = tl.where(mask, (x - mean) * r, 0.0)
        wdy = tl.where(mask, w * dy, 0.0)
        s1 += xhat * wdy
        s2 += wdy
    c1 = tl.sum(s1, axis=0) / n
    c2 = tl.sum(s2, axis=0) / n
    for start in range(0, n, BLOCK):
        c = start + cols
        mask = c < n
        x = tl.load(x_ptr + row * n + c, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * n + c, mask=mask, other=0.0).to(tl.float32)
        xhat = (x - mean) * r
        tl.store(dx_ptr + row * n + c, (w * dy - (xhat * c1 + c2)) * r, mask=mask)


@triton.jit
def _ln_bwd_wb(x_ptr, dy_ptr, dw_ptr, db_ptr, mean_ptr, rstd_ptr, rows, n, BLOCK: tl.constexpr):
    c = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = c < n
    accw = tl.zeros((BLOCK,), dtype=tl.float32)
    accb = tl.zeros((BLOCK,), dtype=tl.float32)
    for row in range(0, rows):
        x = tl.load(x_ptr + row * n + c, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + row * n + c, mask=mask, other=0.0).to(tl.float32)
        mean = tl.load(mean_ptr + row)
        r = tl.load(rstd_ptr + row)
        accw += dy * (x - mean) * r
        accb += dy
    tl.store(dw_ptr + c, accw, mask=mask)
    tl.store(db_ptr + c, accb, mask=mask)


class _LN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, eps):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        rows = x2.shape[0]
        y = torch.empty_like(x2)
        mean = torch.empty((rows,), device=x.device, dtype=torch.float32)
        rstd = torch.empty((rows,), device=x.device, dtype=torch.float32)
        block = min(triton.next_power_of_2(n), MAX_TILE)
        if rows > 0:
            _ln_fwd[(rows,)](x2, w, b, y, mean, rstd, n, min(n, block), eps, BLOCK=block)
        ctx.save_for_backward(x2, w, mean, rstd)
        ctx.shape = x.shape
        return y.view(x.shape)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        x2, w, mean, rstd = ctx.saved_tensors
        rows, n = x2.shape
        dy2 = dy.reshape(rows, n).contiguous()
        dx = torch.empty_like(x2)
        dw = torch.empty_like(w)
        db = torch.empty_like(w)
        block = min(triton.next_power_of_2(n), MAX_TILE)
        if rows > 0:
            _ln_bwd_x[(rows,)](x2, w, dy2, dx, mean, rstd, n, BLOCK=block)
        wb = min(block, 64)
        _ln_bwd_wb[(triton.cdiv(n, wb),)](x2, dy2, dw, db, mean, rstd, rows, n, BLOCK=wb)
        return dx.view(ctx.shape), dw, db, None


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        return _LN.apply(x, self.ln.weight.contiguous(), self.ln.bias.contiguous(), self.ln.eps)
