"""Test operator (gathers): index_select along the middle dim of a (B, T, C) tensor (slices C apart, B outer
positions), then a per-channel bias and a relu in the same kernel."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x, index):
        return torch.relu(torch.index_select(x, 1, index) + self.bias)


def get_inputs():
    return [torch.randn(8, 128, 64), torch.randint(0, 128, (32,))]


def get_init_inputs():
    return [64]


def get_cpu_inputs():
    return [torch.randn(3, 7, 4), torch.randint(0, 7, (5,))]


def get_cpu_init_inputs():
    return [4]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 4), torch.randint(0, 2, (3,))]]
