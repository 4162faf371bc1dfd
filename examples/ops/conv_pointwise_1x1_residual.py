"""Pointwise (1x1) conv2d with bias, then a residual add of the input and ReLU (fp32).

GPU size: 32 x 256 x 56 x 56 in and out (~103 MB each way, plus the residual read; ~13 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.proj = nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        return torch.relu(self.proj(x) + x)


def get_inputs():
    return [torch.randn(32, 256, 56, 56)]


def get_init_inputs():
    return [256]


def get_cpu_inputs():
    return [torch.randn(2, 20, 5, 3)]


def get_cpu_init_inputs():
    return [20]


def get_cpu_shape_variants():
    return [[torch.randn(1, 20, 3, 7)]]
