"""Conv1d (kernel 5, stride 1, padding 2) with bias, ReLU, then average pooling (kernel 4, stride 2,
padding 1) (fp32).

GPU size: 32 x 64 x 16384 in (~134 MB), 128 channels (~268 MB between the kernels, ~134 MB out)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 5, padding=2)
        self.pool = nn.AvgPool1d(4, stride=2, padding=1)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.randn(32, 64, 16384)]


def get_init_inputs():
    return [64, 128]


def get_cpu_inputs():
    return [torch.randn(2, 3, 13)]


def get_cpu_init_inputs():
    return [3, 5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 9)]]
