"""ResNet stem max pooling: kernel 3, stride 2, padding 1."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(32, 64, 112, 112)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 64, 5, 5)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 7, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 3, 2)]]
