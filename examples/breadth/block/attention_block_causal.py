"""Pre-LN causal self-attention block: LN, fused qkv Linear, heads, causal SDPA, out proj, residual."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        qkv = self.qkv(self.norm(x)).view(b, t, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).reshape(b, t, c)
        return x + self.proj(y)


def get_inputs():
    return [torch.randn(8, 1024, 768)]


def get_init_inputs():
    return [768, 12]


def get_shape_variants():
    return [[torch.randn(1, 4, 768)]]


def get_cpu_inputs():
    return [torch.randn(1, 5, 8)]


def get_cpu_init_inputs():
    return [8, 2]


def get_cpu_shape_variants():
    return [[torch.randn(2, 2, 8)]]
