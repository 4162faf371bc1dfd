"""Reference: a channel shuffle (ShuffleNet's, groups of 2) followed by a learnable per-channel scale. It declares
no shape variants, and its inputs' spatial dimensions are square."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.groups = groups
        self.scale = nn.Parameter(torch.ones(channels))

    def forward(self, x):
        b, c, h, w = x.shape
        shuffled = x.view(b, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(b, c, h, w)
        return shuffled * self.scale.view(1, c, 1, 1)


def get_inputs():
    return [torch.randn(8, 64, 32, 32)]


def get_init_inputs():
    return [64, 2]


def get_cpu_inputs():
    return [torch.randn(2, 4, 5, 5)]


def get_cpu_init_inputs():
    return [4, 2]
