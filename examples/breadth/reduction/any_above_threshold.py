"""Boolean reduction: does any entry of a row exceed 0.5 (early-exit / overflow checks)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return (x > 0.5).any(dim=-1)


def get_inputs():
    return [torch.randn(16384, 4096)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 4096)]]


def get_cpu_inputs():
    return [torch.randn(5, 9)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3)]]
