"""Test operator (scans): a flip that is not around a scan: unsupported (named as aten.flip)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.flip(x, dims=[1]) * 2.0


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 7)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3)]]
