"""Conv2d 3x3 (padding 1) with bias and ReLU, then 2x2 max pooling: two kernels, the pool reads the
conv's output (fp32).

GPU size: 16 x 64 x 128 x 128 in (~67 MB), 128 channels (~134 MB between the kernels, ~34 MB out)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.randn(16, 64, 128, 128)]


def get_init_inputs():
    return [64, 128]


def get_cpu_inputs():
    return [torch.randn(2, 4, 9, 8)]


def get_cpu_init_inputs():
    return [4, 18]


def get_cpu_shape_variants():
    return [[torch.randn(1, 4, 6, 7)]]
