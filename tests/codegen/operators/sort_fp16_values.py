"""Test operator (sorts): an fp16 ascending sort of each row (values only, compared in fp16), scaled after it."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1).values * 0.5


def get_inputs():
    return [torch.randn(64, 1000, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 37, dtype=torch.float16)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 9, dtype=torch.float16)]]
