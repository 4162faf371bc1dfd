"""Conv -> hardswish -> GroupNorm -> spatial mean (a MobileNet-style head)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, c_in, c_out, groups):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3)
        self.norm = nn.GroupNorm(groups, c_out)

    def forward(self, x):
        y = self.norm(F.hardswish(self.conv(x)))
        return y.mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(64, 32, 64, 64)]


def get_init_inputs():
    return [32, 64, 8]


def get_shape_variants():
    return [[torch.randn(1, 32, 8, 8)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 6, 7)]


def get_cpu_init_inputs():
    return [3, 6, 2]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 4, 3)]]
