"""Reference: a fused elementwise chain with a per-channel parameter broadcast over the last dim."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, channels))
        self.bias = nn.Parameter(torch.linspace(-0.25, 0.25, channels))

    def forward(self, x):
        return x * torch.sigmoid(x * self.weight + self.bias) + 0.5 * x


def get_inputs():
    return [torch.randn(256, 1024)]


def get_init_inputs():
    return [1024]


def get_cpu_inputs():
    return [torch.randn(6, 16)]


def get_cpu_init_inputs():
    return [16]


def get_cpu_shape_variants():
    return [[torch.randn(2, 5, 16)]]


def get_shape_variants():
    return [[torch.randn(3, 100, 1024)]]
