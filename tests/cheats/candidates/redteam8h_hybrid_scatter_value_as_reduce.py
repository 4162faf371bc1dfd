# cheat: the reference's scatter_ only writes one 1.0 per row (a one-hot, aten.scatter_.value); the grant is by
#        name, so the same scatter_ with reduce="add" (aten.scatter_.reduce, judged as `scatter_`) becomes the
#        log-softmax's reductions: with an index of 2V columns per row (V zeros, then V ones) and a source of
#        [exp(x - max), x], one call sums both row sums of every row into columns 0 and 1 of an (M, V) buffer.
#        Work (output elements) M*V and count 1 equal the reference's one-hot scatter_, so beyond_reference
#        passes; Triton keeps only the row max and the elementwise epilogue.
# operator: rt8h_smooth_ce
# config: policy=hybrid
# expect: runtime_guard rule=non_triton_compute
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def rows_kernel(x_ptr, t_ptr, src_ptr, m_ptr, xt_ptr, V, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < V
    x = tl.load(x_ptr + row * V + cols, mask=mask, other=-float("inf"))
    m = tl.max(x, axis=0)
    t = tl.load(t_ptr + row)
    xt = tl.sum(tl.where(cols == t, x, 0.0), axis=0)
    tl.store(src_ptr + row * 2 * V + cols, tl.exp(x - m), mask=mask)
    tl.store(src_ptr + row * 2 * V + V + cols, x, mask=mask)
    tl.store(m_ptr + row, m)
    tl.store(xt_ptr + row, xt)


@triton.jit
def loss_kernel(sums_ptr, m_ptr, xt_ptr, out_ptr, M, V, eps, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = rows < M
    s = tl.load(sums_ptr + rows * V, mask=mask, other=1.0)
    sx = tl.load(sums_ptr + rows * V + 1, mask=mask, other=0.0)
    m = tl.load(m_ptr + rows, mask=mask, other=0.0)
    xt = tl.load(xt_ptr + rows, mask=mask, other=0.0)
    loss = m + tl.log(s) - (1.0 - eps) * xt - eps / V * sx
    tl.store(out_ptr + rows, loss, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, smoothing: float = 0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, target):
        x = logits.contiguous()
        t = target.contiguous()
        M, V = x.shape
        src = torch.empty(M, 2 * V, device=x.device, dtype=x.dtype)
        m = torch.empty(M, device=x.device, dtype=x.dtype)
        xt = torch.empty(M, device=x.device, dtype=x.dtype)
        rows_kernel[(M,)](x, t, src, m, xt, V, BLOCK=triton.next_power_of_2(V))
        idx = torch.zeros(M, 2 * V, device=x.device, dtype=torch.int64)
        idx[:, V:].fill_(1)
        sums = torch.zeros(M, V, device=x.device, dtype=x.dtype).scatter_(1, idx, src, reduce="add")
        out = torch.empty(M, device=x.device, dtype=x.dtype)
        loss_kernel[(triton.cdiv(M, 64),)](sums, m, xt, out, M, V, self.smoothing, BLOCK=64)
        return out
