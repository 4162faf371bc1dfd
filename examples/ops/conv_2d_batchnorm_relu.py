"""Conv2d 3x3 (stride 2, padding 1, no bias), inference BatchNorm2d and ReLU: the norm's per-channel
scale and shift fold into the conv's epilogue (fp32).

GPU size: 32 x 64 x 128 x 128 in (~134 MB), 128 x 64 x 64 out (~67 MB, ~10 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(32, 64, 128, 128)]


def get_init_inputs():
    return [64, 128]


def get_cpu_inputs():
    return [torch.randn(2, 3, 9, 8)]


def get_cpu_init_inputs():
    return [3, 20]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 5, 12)]]
