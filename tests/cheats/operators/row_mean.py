"""Reference: the mean over the middle dimension of a (batch, n, d) tensor."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=1)


def get_inputs():
    return [torch.randn(32, 512, 1024)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(4, 9, 12)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 21, 5)]]
