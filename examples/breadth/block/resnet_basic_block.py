"""ResNet basic block in inference mode: conv-bn-relu-conv-bn, identity add, relu."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.eval()

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


def get_inputs():
    return [torch.randn(32, 64, 56, 56)]


def get_init_inputs():
    return [64]


def get_shape_variants():
    return [[torch.randn(1, 64, 7, 7)]]


def get_cpu_inputs():
    return [torch.randn(1, 3, 5, 4)]


def get_cpu_init_inputs():
    return [3]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 2, 3)]]
