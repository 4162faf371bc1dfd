"""Lower-triangular matmul tril(A) @ B (cumulative mixing / linear-attention masks)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, a, b):
        return torch.tril(a) @ b


def get_inputs():
    return [torch.randn(8, 2048, 2048), torch.randn(8, 2048, 128)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 32, 32), torch.randn(1, 32, 64)]]


def get_cpu_inputs():
    return [torch.randn(2, 9, 9), torch.randn(2, 9, 5)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 3), torch.randn(1, 3, 2)]]
