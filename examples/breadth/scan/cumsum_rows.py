"""Running sum along the last dim (prefix sums of per-token counts or weights)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=-1)


def get_inputs():
    return [torch.randn(4096, 4096)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(8, 4096)]]


def get_cpu_inputs():
    return [torch.randn(6, 37)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5)], [torch.randn(3, 64)]]
