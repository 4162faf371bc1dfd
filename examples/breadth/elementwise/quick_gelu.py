"""CLIP's QuickGELU: x * sigmoid(1.702 * x)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


def get_inputs():
    return [torch.randn(64, 257, 1024)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(2, 5, 12)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 3)]]
