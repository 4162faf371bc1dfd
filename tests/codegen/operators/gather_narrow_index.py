"""Test operator (gathers): torch.gather with an index smaller than the input outside the gathered dim (fewer
rows, as torch allows): the kernel reads the source narrowed to the index's rows."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, index):
        return torch.gather(x, 1, index) * 2.0


def get_inputs():
    return [torch.randn(64, 32), torch.randint(0, 32, (16, 4))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(5, 6), torch.randint(0, 6, (3, 2))]
