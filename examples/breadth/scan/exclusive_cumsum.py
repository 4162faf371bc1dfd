"""Exclusive prefix sum (cumsum minus the element): start offsets of ragged segments."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1) - x


def get_inputs():
    return [torch.rand(512, 8192)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.rand(1, 128)]]


def get_cpu_inputs():
    return [torch.rand(5, 19)]


def get_cpu_shape_variants():
    return [[torch.rand(2, 1)]]
