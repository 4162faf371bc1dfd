"""GroupNorm on an image batch (16 x 128 x 128 x 128 fp32, ~256 MB in and out)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(16, 128, 128, 128)]


def get_init_inputs():
    return [8, 128]


def get_cpu_inputs():
    return [torch.randn(2, 6, 5, 4)]


def get_cpu_init_inputs():
    return [3, 6]


def get_cpu_shape_variants():
    return [[torch.randn(3, 6, 2, 7)]]
