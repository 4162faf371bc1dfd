"""index_select of rows (sampling a subset of nodes or tokens)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, index):
        return torch.index_select(x, 0, index)


def get_inputs():
    return [torch.randn(100000, 256), torch.randint(0, 100000, (16384,))]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1000, 256), torch.randint(0, 1000, (3,))]]


def get_cpu_inputs():
    return [torch.randn(12, 7), torch.randint(0, 12, (5,))]


def get_cpu_shape_variants():
    return [[torch.randn(4, 3), torch.randint(0, 4, (1,))]]
