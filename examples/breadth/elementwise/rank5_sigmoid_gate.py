"""Video channel gating: x (B, C, T, H, W) * sigmoid(g) with g (B, C, T, 1, 1) broadcast over space."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, g):
        return x * torch.sigmoid(g)


def get_inputs():
    return [torch.randn(4, 64, 16, 56, 56), torch.randn(4, 64, 16, 1, 1)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 8, 2, 7, 7), torch.randn(1, 8, 2, 1, 1)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 2, 4, 5), torch.randn(2, 3, 2, 1, 1)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 1, 3, 2), torch.randn(1, 2, 1, 1, 1)]]
