"""Reference: swap the last two dimensions of a (B, M, N) tensor into a new contiguous tensor."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.transpose(1, 2).contiguous()


def get_inputs():
    return [torch.randn(16, 1024, 768)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 12, 20)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 7, 33)]]
