"""Elementwise chain over two inputs: silu(a) * sigmoid(b) + a, clamped (memory-bound, ~800 MB)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.clamp(F.silu(a) * torch.sigmoid(b) + a, min=-4.0, max=4.0)


def get_inputs():
    return [torch.randn(8192, 8192), torch.randn(8192, 8192)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(33, 17), torch.randn(33, 17)]


def get_cpu_shape_variants():
    return [[torch.randn(5, 129), torch.randn(5, 129)]]
