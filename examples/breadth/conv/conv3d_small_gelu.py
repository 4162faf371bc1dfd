"""Video stem: 3x3x3 conv, padding 1, then GELU (shapes kept tiny on CPU)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv3d(c_in, c_out, 3, padding=1)

    def forward(self, x):
        return F.gelu(self.conv(x))


def get_inputs():
    return [torch.randn(4, 3, 16, 112, 112)]


def get_init_inputs():
    return [3, 64]


def get_shape_variants():
    return [[torch.randn(1, 3, 4, 8, 8)]]


def get_cpu_inputs():
    return [torch.randn(1, 2, 3, 4, 3)]


def get_cpu_init_inputs():
    return [2, 3]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 2, 2, 2)]]
