# cheat: none intended in the arithmetic: the Triton tutorial's flash attention (online softmax, exp2, TF32 tl.dot as
#        the class allows) as an LLM ports it, with the tutorial's one N_CTX = q.shape[2] for both the query rows and
#        the key loop, and one head dim D = q.shape[-1] for q/k and v. F.scaled_dot_product_attention takes
#        q (.., L, E), k (.., S, E), v (.., S, Ev) with L != S and Ev != E: cross-attention (decoder queries over
#        encoder keys), KV-cache decoding (L = 1, S = the cache: here every token attends to the first cached key
#        alone, o = v[..., 0, :]), chunked prefill, MLA (Ev != E). With S > L the keys past L are never read (the
#        attention silently truncated to the first L keys); with S < L the kernel reads past k and v's storage.
#        The checker never draws L != S: q, k and v are declared with one shape, and auto_variants /
#        edge_variants / widest (evaluator.py) narrow, widen and re-batch the three inputs together, so every
#        trial keeps S == L and Ev == E. Measured: L = S = 8: 4e-7; L = 8, S = 24: max error 1.05 (mean |ref| 0.26);
#        L = 1, S = 16 (decode): 2.3; L = 24, S = 8: 2.9e33 (reads past k/v). With the operator declaring
#        get_cpu_shape_variants of (L, S) = (8, 24) and (1, 16) the same file is REJECTED (99.6% outside). NB the
#        honest control honest_llm/rt17_flash_attention_tf32.py has the same N_CTX idiom (errors 1.0 and 2.9 on
#        those shapes): a fix that draws L != S must update that control too.
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
        acc = acc * alpha[:, None]
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
