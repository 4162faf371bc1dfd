"""Causal self-attention with F.scaled_dot_product_attention(is_causal=True) on (B, H, T, D)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(4, 16, 2048, 64), torch.randn(4, 16, 2048, 64), torch.randn(4, 16, 2048, 64)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 16, 16, 64), torch.randn(1, 16, 16, 64), torch.randn(1, 16, 16, 64)]]


def get_cpu_inputs():
    return [torch.randn(1, 2, 6, 4), torch.randn(1, 2, 6, 4), torch.randn(1, 2, 6, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1, 3, 4), torch.randn(2, 1, 3, 4), torch.randn(2, 1, 3, 4)]]
