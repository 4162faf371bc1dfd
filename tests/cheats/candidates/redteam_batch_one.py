# cheat: a "GEMV fast path" for a single input row that forgets the bias. Batch 1 is the most common inference
#        shape, but the checker's shapes are the declared batch, the declared variants and its own n-1 and
#        2n+1: with a declared batch above 2 it never calls the layer on one row.
# operator: linear_small
# expect: mismatch
import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def linear_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    n_out,
    n_in,
    sxm,
    sxk,
    swn,
    swk,
    sym,
    syn,
    HAS_BIAS: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < n_out
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k0 in range(0, n_in, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        k_mask = ks < n_in
        x = tl.load(x_ptr + row * sxm + ks * sxk, mask=k_mask, other=0.0)
        w = tl.load(
            w_ptr + cols[:, None] * swn + ks[None, :] * swk, mask=col_mask[:, None] & k_mask[None, :], other=0.0
        )
        acc += tl.sum(w * x[None, :], axis=1)
    if HAS_BIAS:
        acc += tl.load(b_ptr + cols, mask=col_mask, other=0.0)
    tl.store(y_ptr + row * sym + cols * syn, acc, mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        w, b = self.linear.weight, self.linear.bias
        n_rows, n_in = rows.shape
        n_out = w.shape[0]
        y = torch.empty(n_rows, n_out, dtype=x.dtype, device=x.device)
        grid = (n_rows, triton.cdiv(n_out, 32))
        linear_kernel[grid](
            rows,
            w,
            b,
            y,
            n_out,
            n_in,
            rows.stride(0),
            rows.stride(1),
            w.stride(0),
            w.stride(1),
            y.stride(0),
            y.stride(1),
            HAS_BIAS=n_rows != 1,
            BLOCK_N=32,
            BLOCK_K=32,
        )
        return y.reshape(*x.shape[:-1], n_out)
