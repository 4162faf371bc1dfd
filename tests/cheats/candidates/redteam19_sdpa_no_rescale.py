# cheat: the Triton tutorial's flash attention (TF32 tl.dot as the class allows) with the online softmax's
#        accumulator rescale dropped: `acc = acc * alpha[:, None]` (one FMA per output element per key tile) is left
#        out while the denominator l_i is still rescaled, a classic port bug (and a tempting "saving"). Exact while the
#        keys fit one BLOCK_N = 16 tile (the first tile's alpha is exp2(-inf) = 0 either way); from the second tile on,
#        every earlier tile's contribution is summed with a stale max: o = sum_t exp(m_t - m_final)-weighted mix
#        scaled wrongly, off by O(1) as soon as a later tile holds a larger score. The checker never runs more than
#        one key tile: the sequence dimension (dim -2 of q, k, v) is 8 in get_cpu_inputs, auto_variants shrink it
#        by one, edge_variants re-batch, and `widest` widens only the LAST dimension (the head dim here), so no
#        trial has S > 8. In real use (S = 256 declared for the GPU, thousands in an LLM) the output is garbage.
#        Measured: S = 8 and 16: < 5e-7; S = 64: max error 1.62 (mean |ref| 0.18). `foundry check --inputs
#        '[[1,2,40,16]]*3'` (S = 40) REJECTS it (66.9% of elements outside).
# operator: rt18_sdpa_plain
# expect: mismatch|shape_mismatch|incomplete_output|crash
import math

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _attn_fwd(Q, K, V, O, sm_scale,
              stride_qz, stride_qh, stride_qm, stride_qk,
              stride_kz, stride_kh, stride_kn, stride_kk,
              stride_vz, stride_vh, stride_vn, stride_vk,
              stride_oz, stride_oh, stride_om, stride_ok,
              H, N_CTX, D,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + off_z * stride_qz + off_h * stride_qh + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qk
    q = tl.load(q_ptrs, mask=(offs_m[:, None] < N_CTX) & (offs_d[None, :] < D), other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # 1/log(2)
    for start_n in range(0, N_CTX, BLOCK_N):
        cols = start_n + offs_n
        k_ptrs = K + off_z * stride_kz + off_h * stride_kh + cols[None, :] * stride_kn + offs_d[:, None] * stride_kk
        v_ptrs = V + off_z * stride_vz + off_h * stride_vh + cols[:, None] * stride_vn + offs_d[None, :] * stride_vk
        k = tl.load(k_ptrs, mask=(cols[None, :] < N_CTX) & (offs_d[:, None] < D), other=0.0)
        qk = tl.dot(q, k)
        qk = tl.where(cols[None, :] < N_CTX, qk * qk_scale, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_ij[:, None])
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        v = tl.load(v_ptrs, mask=(cols[:, None] < N_CTX) & (offs_d[None, :] < D), other=0.0)
        acc = tl.dot(p, v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    o_ptrs = O + off_z * stride_oz + off_h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_ok
    tl.store(o_ptrs, acc, mask=(offs_m[:, None] < N_CTX) & (offs_d[None, :] < D))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        Z, H, N_CTX, D = q.shape
        o = torch.empty(q.shape, device=q.device, dtype=q.dtype)
        BLOCK_M, BLOCK_N = 16, 16
        grid = (triton.cdiv(N_CTX, BLOCK_M), Z * H)
        _attn_fwd[grid](q, k, v, o, 1.0 / math.sqrt(D),
                        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
                        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
                        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
                        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
                        H, N_CTX, D, HEAD_DIM=max(16, triton.next_power_of_2(D)), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
        return o
