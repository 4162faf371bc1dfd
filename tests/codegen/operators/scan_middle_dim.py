"""Test operator (scans): a running sum along the middle dim of a (B, T, C) tensor: rows C apart (strided), then
a relu."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(torch.cumsum(x, dim=1) + 1.0)


def get_inputs():
    return [torch.randn(8, 128, 64)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 7, 3)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 2)]]
