"""Transformer MLP activation: tanh-approximate GELU of x plus a per-feature bias (B, T, C)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim) * 0.1)

    def forward(self, x):
        return F.gelu(x + self.bias, approximate="tanh")


def get_inputs():
    return [torch.randn(16, 1024, 4096)]


def get_init_inputs():
    return [4096]


def get_shape_variants():
    return [[torch.randn(1, 8, 4096)]]


def get_cpu_inputs():
    return [torch.randn(2, 5, 24)]


def get_cpu_init_inputs():
    return [24]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 24)]]
