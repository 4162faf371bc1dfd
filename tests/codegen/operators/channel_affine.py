"""Test operator: a per-channel affine map and SiLU over an image batch whose planes are wide enough for
the rows layout of pointwise kernels at default genes."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(1, channels, 1, 1))
        self.shift = nn.Parameter(torch.randn(channels, 1, 1))

    def forward(self, x):
        return F.silu(x * self.scale + self.shift)


def get_inputs():
    return [torch.randn(2, 3, 32, 40)]


def get_init_inputs():
    return [3]
