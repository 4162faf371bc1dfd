"""Log-space prefix sums (stable cumulative log-partition), torch.logcumsumexp."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.logcumsumexp(x, dim=-1)


def get_inputs():
    return [torch.randn(1024, 4096)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 512)]]


def get_cpu_inputs():
    return [torch.randn(4, 29)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3)]]
