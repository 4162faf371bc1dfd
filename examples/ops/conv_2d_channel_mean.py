"""Conv2d 3x3 (no padding) with bias, then tanh of the mean over channels: a reduction over the conv's
channel dim, in the conv's epilogue when one tile spans the channels (fp32).

GPU size: 32 x 32 x 128 x 128 in (~67 MB), 64 channels (~127 MB if it went through memory, ~2 MB out)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)

    def forward(self, x):
        return torch.tanh(self.conv(x).mean(dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(32, 32, 128, 128)]


def get_init_inputs():
    return [32, 64]


def get_cpu_inputs():
    return [torch.randn(2, 3, 7, 8)]


def get_cpu_init_inputs():
    return [3, 5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 5, 5)]]
