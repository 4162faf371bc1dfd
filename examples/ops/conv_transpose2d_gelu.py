"""ConvTranspose2d (kernel 4, stride 2, padding 1: a 2x upsampling) with bias, then tanh-approximate
GELU (fp32).

GPU size: 16 x 128 x 64 x 64 in (~34 MB), 64 x 128 x 128 out (~67 MB, ~17 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, out_channels, 4, stride=2, padding=1)

    def forward(self, x):
        return nn.functional.gelu(self.up(x), approximate="tanh")


def get_inputs():
    return [torch.randn(16, 128, 64, 64)]


def get_init_inputs():
    return [128, 64]


def get_cpu_inputs():
    return [torch.randn(2, 5, 4, 3)]


def get_cpu_init_inputs():
    return [5, 17]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5, 3, 5)]]
