"""Ascending sort of each row, values only (quantiles, trimmed means)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1).values


def get_inputs():
    return [torch.randn(8192, 1024)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(6, 13)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3)]]
