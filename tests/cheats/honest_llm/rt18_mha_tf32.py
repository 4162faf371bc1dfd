# honest: an LLM-style self-attention block for nn.MultiheadAttention (batch_first): a tiled linear kernel (tl.dot,
#         default precision: TF32 on tensor cores, as the operator's tf32 class allows) for the fused in-projection
#         into one (B, S, 3E) buffer, the Triton tutorial's flash attention reading q, k, v as strided views of it
#         (head dim padded to 16), and the same linear kernel for the out-projection; strides passed through
# operator: rt18_mha_self
import math

import torch
import triton
import triton.language as tl
from torch import nn


@triton.jit
def _linear(X, W, B, Y, M, N, K, S, sxb, sxs, sxk, swn, swk, syb, sys_, syn,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    xrow = (rm // S) * sxb + (rm % S) * sxs
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        x = tl.load(X + xrow[:, None] + kk[None, :] * sxk, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(W + rn[None, :] * swn + kk[:, None] * swk, mask=(rn[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc = tl.dot(x, w, acc)
    acc += tl.load(B + rn, mask=rn < N, other=0.0)[None, :]
    yrow = (rm // S) * syb + (rm % S) * sys_
    tl.store(Y + yrow[:, None] + rn[None, :] * syn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


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


def _run_linear(x, w, b, y):
    Bz, S, K = x.shape
    N = w.shape[0]
    M = Bz * S
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    _linear[grid](x, w, b, y, M, N, K, S, x.stride(0), x.stride(1), x.stride(2), w.stride(0), w.stride(1),
                  y.stride(0), y.stride(1), y.stride(2), BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)


class ModelNew(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.mha = nn.MultiheadAttention(embed, heads, batch_first=True)
        self.heads = heads

    def forward(self, x):
        Bz, S, E = x.shape
        H = self.heads
        D = E // H
        qkv = torch.empty((Bz, S, 3 * E), device=x.device, dtype=x.dtype)
        _run_linear(x, self.mha.in_proj_weight, self.mha.in_proj_bias, qkv)
        q, k, v = qkv[..., :E], qkv[..., E:2 * E], qkv[..., 2 * E:]
        att = torch.empty((Bz, S, E), device=x.device, dtype=x.dtype)
        grid = (triton.cdiv(S, 16), Bz * H)
        _attn_fwd[grid](q, k, v, att, 1.0 / math.sqrt(D),
                        q.stride(0), D, q.stride(1), q.stride(2),
                        k.stride(0), D, k.stride(1), k.stride(2),
                        v.stride(0), D, v.stride(1), v.stride(2),
                        att.stride(0), D, att.stride(1), att.stride(2),
                        H, S, D, HEAD_DIM=max(16, triton.next_power_of_2(D)), BLOCK_M=16, BLOCK_N=16)
        out = torch.empty((Bz, S, E), device=x.device, dtype=x.dtype)
        _run_linear(att, self.mha.out_proj.weight, self.mha.out_proj.bias, out)
        return out
