"""bf16 residual branch: y + gelu(x)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "bf16"


class Model(nn.Module):
    def forward(self, x, y):
        return y + F.gelu(x)


def get_inputs():
    return [torch.randn(16, 2048, 4096, dtype=torch.bfloat16), torch.randn(16, 2048, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 1, 4096, dtype=torch.bfloat16), torch.randn(1, 1, 4096, dtype=torch.bfloat16)]]


def get_cpu_inputs():
    return [torch.randn(3, 4, 16, dtype=torch.bfloat16), torch.randn(3, 4, 16, dtype=torch.bfloat16)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 9, dtype=torch.bfloat16), torch.randn(1, 1, 9, dtype=torch.bfloat16)]]
