"""BatchNorm2d as a freshly built module (training mode: batch statistics) followed by ReLU."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return F.relu(self.bn(x))


def get_inputs():
    return [torch.randn(32, 64, 56, 56)]


def get_init_inputs():
    return [64]


def get_shape_variants():
    return [[torch.randn(2, 64, 4, 4)]]


def get_cpu_inputs():
    return [torch.randn(3, 4, 5, 3)]


def get_cpu_init_inputs():
    return [4]


def get_cpu_shape_variants():
    return [[torch.randn(2, 4, 1, 2)]]
