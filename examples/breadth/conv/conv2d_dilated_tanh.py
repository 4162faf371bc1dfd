"""Dilated 3x3 conv (dilation 2, padding 2) then tanh (DeepLab ASPP branch)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=2, dilation=2)

    def forward(self, x):
        return torch.tanh(self.conv(x))


def get_inputs():
    return [torch.randn(16, 256, 64, 64)]


def get_init_inputs():
    return [256, 256]


def get_shape_variants():
    return [[torch.randn(1, 256, 8, 8)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 7, 5)]


def get_cpu_init_inputs():
    return [3, 4]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 3, 3)]]
