"""Test operator (gathers): torch.gather along dim 1 of a 3-d tensor (the gathered dim strided, not the last),
the index as large as the input outside that dim, then a sigmoid."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, index):
        return torch.sigmoid(torch.gather(x, 1, index))


def get_inputs():
    return [torch.randn(16, 64, 32), torch.randint(0, 64, (16, 8, 32))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 6, 3), torch.randint(0, 6, (2, 4, 3))]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 2), torch.randint(0, 2, (1, 3, 2))]]
