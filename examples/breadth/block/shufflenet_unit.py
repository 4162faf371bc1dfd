"""ShuffleNet unit: 1x1 conv, inference BN, ReLU, channel shuffle over groups (H != W)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.groups = groups
        self.conv = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.eval()

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))
        b, c, h, w = y.shape
        y = y.view(b, self.groups, c // self.groups, h, w).transpose(1, 2).contiguous()
        return y.view(b, c, h, w)


def get_inputs():
    return [torch.randn(32, 240, 28, 20)]


def get_init_inputs():
    return [240, 3]


def get_shape_variants():
    return [[torch.randn(1, 240, 7, 5)]]


def get_cpu_inputs():
    return [torch.randn(2, 6, 3, 5)]


def get_cpu_init_inputs():
    return [6, 3]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6, 4, 1)]]
