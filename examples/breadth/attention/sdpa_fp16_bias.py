"""fp16 attention with an additive float bias (ALiBi / relative position) through SDPA."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def forward(self, q, k, v, bias):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)


def get_inputs():
    return [torch.randn(4, 16, 1024, 64, dtype=torch.float16), torch.randn(4, 16, 1024, 64, dtype=torch.float16), torch.randn(4, 16, 1024, 64, dtype=torch.float16), torch.randn(1, 16, 1024, 1024, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 16, 8, 64, dtype=torch.float16), torch.randn(1, 16, 8, 64, dtype=torch.float16), torch.randn(1, 16, 8, 64, dtype=torch.float16), torch.randn(1, 16, 8, 8, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 4, dtype=torch.float16), torch.randn(1, 2, 5, 4, dtype=torch.float16), torch.randn(1, 2, 5, 4, dtype=torch.float16), torch.randn(1, 2, 5, 5, dtype=torch.float16)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1, 3, 4, dtype=torch.float16), torch.randn(2, 1, 3, 4, dtype=torch.float16), torch.randn(2, 1, 3, 4, dtype=torch.float16), torch.randn(1, 1, 3, 3, dtype=torch.float16)]]
