"""Conv3d 3x3x3 (padding 1) with bias, a scale and a clamp to [-1, 1] (fp32).

GPU size: 4 x 32 x 32 x 64 x 64 in (~67 MB), 32 out channels (~67 MB out, ~29 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, scale):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, 3, padding=1)
        self.scale = scale

    def forward(self, x):
        return torch.clamp(self.conv(x) * self.scale, -1.0, 1.0)


def get_inputs():
    return [torch.randn(4, 32, 32, 64, 64)]


def get_init_inputs():
    return [32, 32, 0.25]


def get_cpu_inputs():
    return [torch.randn(2, 3, 5, 4, 6)]


def get_cpu_init_inputs():
    return [3, 17, 0.25]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 3, 6, 5)]]
