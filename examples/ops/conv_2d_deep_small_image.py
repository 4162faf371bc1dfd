"""Conv2d 3x3 (padding 1) over a small, deep feature map (a late stage of a residual network) with bias, then
the residual and ReLU (fp32). Few output tiles (8 x 7 x 7 positions by 512 channels) against a long K
(512 in-channels x 9 taps): a GEMM over output tiles alone leaves most of the GPU idle.

GPU size: 8 x 512 x 7 x 7 in and out (~0.8 MB each, 9.4 MB of weights), ~1.85 GFLOP."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x) + x)


def get_inputs():
    return [torch.randn(8, 512, 7, 7)]


def get_init_inputs():
    return [512]


def get_cpu_inputs():
    return [torch.randn(2, 20, 4, 3)]


def get_cpu_init_inputs():
    return [20]


def get_cpu_shape_variants():
    return [[torch.randn(1, 20, 5, 5)]]
