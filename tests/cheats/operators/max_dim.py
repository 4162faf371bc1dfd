"""Reference: the maximum of each row and its index, as a (values, indices) tuple."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        values, indices = torch.max(x, dim=-1)
        return values, indices


def get_inputs():
    return [torch.randn(4096, 1000)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(6, 37)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 70)]]
