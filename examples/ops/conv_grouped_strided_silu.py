"""Grouped conv2d (4 groups, 3x3, stride 2, padding 1) without bias, then SiLU (fp32).

GPU size: 32 x 128 x 128 x 128 in (~268 MB), 256 x 64 x 64 out (~134 MB, ~15 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, groups=groups, bias=False)

    def forward(self, x):
        return nn.functional.silu(self.conv(x))


def get_inputs():
    return [torch.randn(32, 128, 128, 128)]


def get_init_inputs():
    return [128, 256, 4]


def get_cpu_inputs():
    return [torch.randn(2, 8, 9, 7)]


def get_cpu_init_inputs():
    return [8, 36, 4]


def get_cpu_shape_variants():
    return [[torch.randn(1, 8, 6, 11)]]
