"""Reference: a matrix product with a weight, y = x @ W. Its reference runs no convolution."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, k: int, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(k, n) / k**0.5)

    def forward(self, x):
        return x @ self.weight


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024, 768]


def get_cpu_inputs():
    return [torch.randn(8, 24)]


def get_cpu_init_inputs():
    return [24, 20]
