"""Running maximum with the index where it was reached (values, indices)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        values, indices = torch.cummax(x, dim=1)
        return values, indices


def get_inputs():
    return [torch.randn(1024, 4096)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 256)]]


def get_cpu_inputs():
    return [torch.randn(5, 14)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 4)]]
