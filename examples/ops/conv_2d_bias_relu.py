"""Conv2d 3x3 (padding 1) with bias, then ReLU and a scale: an implicit GEMM with a fused epilogue (fp32).

GPU size: 16 x 64 x 128 x 128 in, 128 out channels (~64 MB in, ~128 MB out, ~19 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)) * 0.5


def get_inputs():
    return [torch.randn(16, 64, 128, 128)]


def get_init_inputs():
    return [64, 128]


def get_cpu_inputs():
    return [torch.randn(2, 5, 7, 6)]


def get_cpu_init_inputs():
    return [5, 18]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5, 5, 9)]]
