"""Minimum over dim 1 of a 3-D tensor (values only; strided reduction, 512 MB read)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.min(x, dim=1).values


def get_inputs():
    return [torch.randn(64, 512, 4096)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 21, 13)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 5, 40)]]
