"""Reference: batched matrix multiply of (B, M, K) by (B, K, N)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(16, 256, 128), torch.randn(16, 128, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 8, 12), torch.randn(3, 12, 10)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 5, 7), torch.randn(2, 7, 9)]]
