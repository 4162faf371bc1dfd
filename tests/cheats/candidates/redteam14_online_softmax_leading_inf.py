# cheat: none intended (the classic online-softmax slip): one pass keeps a running max m and sum l over column tiles,
#        l = l * exp(m - m_new) + sum(exp(x - m_new)), starting from m = -inf, with no guard for a tile whose entries
#        are ALL -inf. When the first tile(s) of a row are fully masked, m_new = -inf and exp(-inf - (-inf)) = NaN, so
#        the whole row comes out NaN. That is every row of sliding-window attention (Mistral-style: columns before
#        i - window are -inf), and every row of a left-padded batch, whose leading positions are masked with -inf.
#        The checker's "-inf entries" trial masks positions i.i.d. (10%) and keeps column 0 finite "so no row is all
#        -inf": the first tile always holds a finite entry, later all -inf tiles are harmless (m stays finite); the
#        masked wide edge variant fills the leading half with -1e9, which is finite, so the slip never fires.
# operator: softmax_rows
# expect: incomplete_output rule=coverage
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, n_cols, sx0, sx1, sy0, sy1, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    l = 0.0
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        l = l * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * sx0 + c * sx1, mask=c < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(y_ptr + row * sy0 + c * sy1, (tl.exp(x - m) / l).to(y_ptr.dtype.element_ty), mask=c < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1])
        y = torch.empty_like(x2)
        online_softmax_kernel[(x2.shape[0],)](x2, y, x2.shape[1], x2.stride(0), x2.stride(1), y.stride(0),
                                              y.stride(1), BLOCK=16)
        return y.reshape(shape)
