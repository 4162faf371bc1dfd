"""Reference: relu(x + bias) with a bias vector broadcast over the last dimension (both are inputs)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        return torch.relu(x + bias)


def get_inputs():
    return [torch.randn(64, 128, 1024), torch.randn(1024)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(4, 6, 16), torch.randn(16)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 24), torch.randn(24)]]
