"""Grouped-query attention: k, v with fewer heads repeated with repeat_interleave, causal SDPA."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k, v):
        groups = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(2, 32, 2048, 128), torch.randn(2, 8, 2048, 128), torch.randn(2, 8, 2048, 128)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 32, 4, 128), torch.randn(1, 8, 4, 128), torch.randn(1, 8, 4, 128)]]


def get_cpu_inputs():
    return [torch.randn(1, 4, 5, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 3, 4), torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4)]]
