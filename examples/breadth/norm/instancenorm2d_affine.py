"""Style-transfer InstanceNorm2d with affine parameters."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.norm = nn.InstanceNorm2d(channels, affine=True)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(16, 128, 128, 128)]


def get_init_inputs():
    return [128]


def get_shape_variants():
    return [[torch.randn(1, 128, 8, 8)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 5, 6)]


def get_cpu_init_inputs():
    return [3]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 2, 3)]]
