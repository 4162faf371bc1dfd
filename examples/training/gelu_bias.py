"""Bias add then GELU (erf), a transformer MLP's activation, used in training (8192 x 4096 fp32)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(features) * 0.1)

    def forward(self, x):
        return F.gelu(x + self.bias)


def get_inputs():
    return [torch.randn(8192, 4096)]


def get_init_inputs():
    return [4096]


def get_cpu_inputs():
    return [torch.randn(6, 16)]


def get_cpu_init_inputs():
    return [16]
