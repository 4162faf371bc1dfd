"""ConvTranspose3d (kernel 3, stride 2, padding 1, output_padding 1) with bias, a scale and sigmoid (fp32).

GPU size: 4 x 64 x 16 x 32 x 32 in (~17 MB), 32 x 32 x 64 x 64 out (~67 MB, ~15 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        return torch.sigmoid(self.up(x) * 2.0)


def get_inputs():
    return [torch.randn(4, 64, 16, 32, 32)]


def get_init_inputs():
    return [64, 32]


def get_cpu_inputs():
    return [torch.randn(2, 2, 2, 2, 3)]


def get_cpu_init_inputs():
    return [2, 3]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 2, 3, 2)]]
