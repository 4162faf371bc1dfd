"""Row median with its index (robust statistics), torch.median over the last dim."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        values, indices = torch.median(x, dim=-1)
        return values, indices


def get_inputs():
    return [torch.randn(8192, 1023)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 63)]]


def get_cpu_inputs():
    return [torch.randn(5, 11)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3)]]
