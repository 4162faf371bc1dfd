"""Adaptive average pooling to (3, 5) from sizes that do not divide evenly (overlapping windows)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool2d(x, (3, 5))


def get_inputs():
    return [torch.randn(32, 256, 50, 61)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 256, 7, 9)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 10, 11)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 4, 7)]]
