"""Conv2d 5x5 (padding 2) with bias, InstanceNorm2d (no affine) and LeakyReLU (fp32).

GPU size: 16 x 32 x 128 x 128 in (~34 MB), 64 out channels (~67 MB, written and read back; ~14 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 5, padding=2)
        self.norm = nn.InstanceNorm2d(out_channels)

    def forward(self, x):
        return nn.functional.leaky_relu(self.norm(self.conv(x)), 0.1)


def get_inputs():
    return [torch.randn(16, 32, 128, 128)]


def get_init_inputs():
    return [32, 64]


def get_cpu_inputs():
    return [torch.randn(2, 3, 7, 6)]


def get_cpu_init_inputs():
    return [3, 5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 4, 9)]]
