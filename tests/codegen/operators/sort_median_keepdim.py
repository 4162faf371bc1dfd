"""Test operator (sorts): the median along the middle dim, kept as 1 (values and indices), centred values after it."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        med, at = torch.median(x, dim=1, keepdim=True)
        return x - med, at


def get_inputs():
    return [torch.randn(16, 255, 32)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 12, 3)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5, 2)]]
