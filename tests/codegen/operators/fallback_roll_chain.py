"""Test operator (hybrid fallback): a roll along the last dim (no Triton template: a library call under
the hybrid policy) between elementwise chains, the one before it and the one after it fused into Triton."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.sigmoid(torch.roll(x * 0.5 + 1.0, shifts=1, dims=-1)) * x


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 7)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 5)]]
