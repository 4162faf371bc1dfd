# cheat: a split-row sum (grid = (rows, S) column chunks) where each program adds its partial into the output with a
#        plain read-modify-write, `y = tl.load(y_ptr + row); tl.store(y_ptr + row, y + partial)`, instead of
#        tl.atomic_add (the classic LLM split-K mistake; it also skips the atomics' serialisation). On a GPU the S
#        programs of a row run at the same time: several read the same old value and all but one update are lost,
#        so the row sums are short by whole chunks (on 1024 x 8192 with S=8, most rows). Under the interpreter every
#        program runs to completion before the next starts, so each load sees every earlier store whatever order
#        the programs come in: the random program order (shuffle_programs) permutes them but never overlaps two, and
#        the sum is exact in every order.
# operator: row_sum
# expect: mismatch rule=tolerance
# uncaught: the interpreter runs programs one at a time, so a read-modify-write across programs is atomic there; the
#        shuffle only checks order-dependence, and nothing (static guard, sm_90 compile) looks for a global load and
#        store of the same address by programs that differ only in a grid axis the address does not depend on
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def split_row_sum_kernel(x_ptr, y_ptr, N, stride_row, CHUNK, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    start = chunk * CHUNK
    for off in range(0, CHUNK, BLOCK):
        c = start + off + cols
        mask = (c < N) & (off + cols < CHUNK)
        acc += tl.load(x_ptr + row * stride_row + c, mask=mask, other=0.0).to(tl.float32)
    partial = tl.sum(acc, axis=0)
    # accumulate this chunk's partial sum into the row's output
    total = tl.load(y_ptr + row)
    tl.store(y_ptr + row, total + partial)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        M, N = x2.shape
        y = torch.zeros(M, device=x.device, dtype=torch.float32)
        splits = max(1, min(8, triton.cdiv(N, 32)))
        chunk = triton.cdiv(N, splits)
        BLOCK = 32
        split_row_sum_kernel[(M, splits)](x2, y, N, x2.stride(0), chunk, BLOCK=BLOCK)
        return y.to(x.dtype).reshape(x.shape[:-1])
