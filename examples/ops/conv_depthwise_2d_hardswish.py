"""Depthwise conv2d 3x3 (groups = channels, padding 1) with bias, then hardswish: a direct kernel (fp32).

GPU size: 32 x 128 x 112 x 112 in and out (~205 MB each way)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels)

    def forward(self, x):
        return nn.functional.hardswish(self.conv(x))


def get_inputs():
    return [torch.randn(32, 128, 112, 112)]


def get_init_inputs():
    return [128]


def get_cpu_inputs():
    return [torch.randn(2, 6, 7, 9)]


def get_cpu_init_inputs():
    return [6]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6, 4, 5)]]
