"""Classifier neck: adaptive average pool to 1x1, then flatten to (B, C)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool2d(x, 1).flatten(1)


def get_inputs():
    return [torch.randn(64, 2048, 7, 7)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 2048, 7, 7)]]


def get_cpu_inputs():
    return [torch.randn(2, 5, 3, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 1, 2)]]
