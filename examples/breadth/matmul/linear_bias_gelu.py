"""MLP up-projection: Linear with bias then GELU, on (B, T, C) tokens."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)

    def forward(self, x):
        return F.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(8, 1024, 1024)]


def get_init_inputs():
    return [1024, 4096]


def get_shape_variants():
    return [[torch.randn(1, 1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(2, 5, 16)]


def get_cpu_init_inputs():
    return [16, 24]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 16)]]
