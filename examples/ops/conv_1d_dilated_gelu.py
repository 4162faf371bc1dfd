"""Dilated conv1d (kernel 3, dilation 2, 'same' length) with bias, then exact GELU (fp32).

GPU size: 32 x 128 x 8192 in and out (~134 MB each way, ~26 GFLOP)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, 3, padding=2, dilation=2)

    def forward(self, x):
        return nn.functional.gelu(self.conv(x))


def get_inputs():
    return [torch.randn(32, 128, 8192)]


def get_init_inputs():
    return [128]


def get_cpu_inputs():
    return [torch.randn(2, 17, 13)]


def get_cpu_init_inputs():
    return [17]


def get_cpu_shape_variants():
    return [[torch.randn(3, 17, 6)]]
