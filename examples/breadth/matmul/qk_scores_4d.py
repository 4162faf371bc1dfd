"""Attention scores on (B, H, T, D): (q @ k.transpose(-2, -1)) * d**-0.5."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k):
        return (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)


def get_inputs():
    return [torch.randn(4, 16, 1024, 64), torch.randn(4, 16, 1024, 64)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 16, 1, 64), torch.randn(1, 16, 64, 64)]]


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 8), torch.randn(1, 2, 6, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1, 1, 4), torch.randn(2, 1, 3, 4)]]
