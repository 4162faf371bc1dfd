# honest: online softmax over column blocks, launch settings in a module-level config dict read in forward
# operator: softmax_rows
import torch
import triton
import triton.language as tl
from torch import nn

# Tuned launch configuration
SOFTMAX_CONFIG = {
    "BLOCK_SIZE": 16,
    "num_warps": 4,
}


@triton.jit
def online_softmax_kernel(x_ptr, y_ptr, stride_xm, stride_ym, N, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    x_row = x_ptr + pid * stride_xm
    y_row = y_ptr + pid * stride_ym
    # pass 1: running max and running sum of exponentials
    m_i = tl.full((BLOCK_SIZE,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(x_row + cols, mask=cols < N, other=float("-inf"))
        m_new = tl.maximum(m_i, x)
        # guard lanes that have only seen -inf so far
        alpha = tl.where(m_new == float("-inf"), 0.0, tl.exp(m_i - m_new))
        p = tl.where(m_new == float("-inf"), 0.0, tl.exp(x - m_new))
        l_i = l_i * alpha + p
        m_i = m_new
    m = tl.max(m_i, axis=0)
    l = tl.sum(l_i * tl.exp(m_i - m), axis=0)
    # pass 2: normalize
    for start in range(0, N, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=float("-inf"))
        tl.store(y_row + cols, tl.exp(x - m) / l, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        M = x.numel() // x.shape[-1]
        N = x.shape[-1]
        x2 = x.view(M, N)
        y = torch.empty_like(x2)
        online_softmax_kernel[(M,)](x2, y, x2.stride(0), y.stride(0), N, **SOFTMAX_CONFIG)
        return y.view(x.shape)
