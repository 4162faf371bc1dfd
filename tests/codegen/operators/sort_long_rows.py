"""Test operator (sorts): a sort of rows longer than one tile holds (SORT_MAX_N): refused, naming the limit."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1).values


def get_inputs():
    return [torch.randn(4, 16384)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 33)]
