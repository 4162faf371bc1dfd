"""Product along the time axis of (1 + r): compounding growth rates."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, r):
        return torch.prod(1.0 + 0.01 * r, dim=-1)


def get_inputs():
    return [torch.randn(8192, 2048)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 2048)]]


def get_cpu_inputs():
    return [torch.randn(5, 12)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1)]]
