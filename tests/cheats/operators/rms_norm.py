"""Reference: RMS normalization over the last dimension with a learned scale."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, dim))

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(512, 4096)]


def get_init_inputs():
    return [4096]


def get_cpu_inputs():
    return [torch.randn(6, 48)]


def get_cpu_init_inputs():
    return [48]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 48)]]
