"""Test operator (sorts): a stable descending sort along the middle dim of a 3-d input (values and indices): tied
values keep their order, which the kernel's (lowest index first) is."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        values, indices = torch.sort(x, dim=1, descending=True, stable=True)
        return values, indices


def get_inputs():
    return [torch.randn(8, 512, 16)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 21, 3)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5, 2)]]
