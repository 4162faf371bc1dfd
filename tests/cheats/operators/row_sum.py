"""Reference: the sum of each row (last dimension)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=-1)


def get_inputs():
    return [torch.randn(1024, 8192)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(7, 50)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 130)]]
