"""Conv2d 3x3 (padding 1) with bias, GroupNorm (8 groups) and ReLU: the conv's output goes through memory
to a row kernel for the group statistics (fp32).

GPU size: 16 x 64 x 96 x 96 in (~38 MB), 128 out channels (~75 MB, written and read back; ~11 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(16, 64, 96, 96)]


def get_init_inputs():
    return [64, 128, 8]


def get_cpu_inputs():
    return [torch.randn(2, 4, 6, 5)]


def get_cpu_init_inputs():
    return [4, 6, 3]


def get_cpu_shape_variants():
    return [[torch.randn(3, 4, 3, 7)]]
