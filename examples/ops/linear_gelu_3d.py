"""A transformer MLP projection: (batch, seq, hidden) @ W^T + b, then tanh-GELU (fp32 matmul)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, hidden, expansion):
        super().__init__()
        self.up = nn.Linear(hidden, hidden * expansion)

    def forward(self, x):
        return F.gelu(self.up(x), approximate="tanh")


def get_inputs():
    return [torch.randn(8, 512, 2048)]


def get_init_inputs():
    return [2048, 4]


def get_cpu_inputs():
    return [torch.randn(2, 5, 16)]


def get_cpu_init_inputs():
    return [16, 2]


def get_cpu_shape_variants():
    return [[torch.randn(1, 9, 16)]]
