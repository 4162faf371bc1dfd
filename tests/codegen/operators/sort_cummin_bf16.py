"""Test operator (sorts): a bf16 running minimum along each row with its indices."""

import torch
from torch import nn

FOUNDRY_PRECISION = "bf16"


class Model(nn.Module):
    def forward(self, x):
        values, indices = torch.cummin(x, dim=-1)
        return values, indices


def get_inputs():
    return [torch.randn(1024, 512, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 40, dtype=torch.bfloat16)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, dtype=torch.bfloat16)]]
