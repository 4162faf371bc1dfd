"""Mish written out as in YOLO code: x * tanh(softplus(x))."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return x * torch.tanh(F.softplus(x))


def get_inputs():
    return [torch.randn(16, 256, 64, 64)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 16, 8, 8)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 5, 7)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 2, 3)]]
