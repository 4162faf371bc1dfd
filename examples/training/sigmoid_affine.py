"""A per-feature affine map then sigmoid, a gating layer, used in training (8192 x 4096 fp32)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return torch.sigmoid(x * self.weight + self.bias)


def get_inputs():
    return [torch.randn(8192, 4096)]


def get_init_inputs():
    return [4096]


def get_cpu_inputs():
    return [torch.randn(6, 16)]


def get_cpu_init_inputs():
    return [16]
