"""Attention output projection without bias plus the residual: x + W y."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x, y):
        return x + self.proj(y)


def get_inputs():
    return [torch.randn(8, 2048, 2048), torch.randn(8, 2048, 2048)]


def get_init_inputs():
    return [2048]


def get_shape_variants():
    return [[torch.randn(1, 1, 2048), torch.randn(1, 1, 2048)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 12), torch.randn(2, 3, 12)]


def get_cpu_init_inputs():
    return [12]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 12), torch.randn(1, 1, 12)]]
