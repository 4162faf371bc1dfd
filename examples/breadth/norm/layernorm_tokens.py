"""nn.LayerNorm over the feature dim of (B, T, C) token activations."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(16, 1024, 1024)]


def get_init_inputs():
    return [1024]


def get_shape_variants():
    return [[torch.randn(1, 1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 20)]


def get_cpu_init_inputs():
    return [20]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 20)]]
