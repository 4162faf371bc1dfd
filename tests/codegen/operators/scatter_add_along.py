"""Test operator (scatters): zeros_like(x).scatter_add(1, index, src) with an index of src's shape (each element
added at its own index along the last dim: a histogram of weights per row)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, index, src):
        return torch.zeros_like(x).scatter_add(1, index, src)


def get_inputs():
    return [torch.randn(64, 128), torch.randint(0, 128, (64, 256)), torch.rand(64, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 5), torch.randint(0, 5, (3, 8)), torch.rand(3, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2), torch.randint(0, 2, (1, 3)), torch.rand(1, 3)]]
