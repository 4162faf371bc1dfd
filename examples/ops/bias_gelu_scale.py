"""Fused elementwise chain with a parameter broadcast: y = gelu(x * scale + bias[c]) - 0.5 * x.

Memory-bound: 32 x 256 x 96 x 96 fp32 in and out (~600 MB moved on GPU).
"""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels, scale):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels, 1, 1))
        self.scale = scale

    def forward(self, x):
        return F.gelu(x * self.scale + self.bias) - 0.5 * x


def get_inputs():
    return [torch.randn(32, 256, 96, 96)]


def get_init_inputs():
    return [256, 1.5]


def get_cpu_inputs():
    return [torch.randn(2, 8, 5, 7)]


def get_cpu_init_inputs():
    return [8, 0.75]


def get_cpu_shape_variants():
    return [[torch.randn(3, 8, 4, 3)]]
