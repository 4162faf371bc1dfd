"""Transformer MLP block: x + fc2(gelu(fc1(layer_norm(x))))."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


def get_inputs():
    return [torch.randn(8, 1024, 1024)]


def get_init_inputs():
    return [1024, 4096]


def get_shape_variants():
    return [[torch.randn(1, 1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 8)]


def get_cpu_init_inputs():
    return [8, 16]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 8)]]
