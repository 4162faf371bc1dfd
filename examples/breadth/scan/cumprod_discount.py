"""Discount factors: cumulative product of per-step gammas in (0.9, 1.0) along time."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, gamma):
        return torch.cumprod(gamma, dim=1)


def get_inputs():
    return [torch.rand(1024, 4096) * 0.1 + 0.9]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.rand(2, 64) * 0.1 + 0.9]]


def get_cpu_inputs():
    return [torch.rand(4, 23) * 0.1 + 0.9]


def get_cpu_shape_variants():
    return [[torch.rand(1, 3) * 0.1 + 0.9]]
