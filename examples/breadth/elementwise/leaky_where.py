"""Leaky ReLU written with torch.where, as in hand-rolled activations."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.where(x > 0, x, 0.2 * x)


def get_inputs():
    return [torch.randn(64, 4096, 1024)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(4, 33)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2)]]
