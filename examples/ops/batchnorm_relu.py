"""Inference BatchNorm2d (running statistics) + ReLU: per-channel broadcasts (~512 MB moved)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.bn(x))


def get_inputs():
    return [torch.randn(32, 128, 128, 128)]


def get_init_inputs():
    return [128]


def get_cpu_inputs():
    return [torch.randn(2, 5, 4, 6)]


def get_cpu_init_inputs():
    return [5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5, 9, 2)]]
