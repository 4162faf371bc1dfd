"""Reference: a 3x3 convolution, ReLU, then a per-pixel channel mix (a matrix product over channels)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, cin: int, cmid: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cmid, 3, padding=1)
        self.mix = nn.Parameter(torch.randn(cout, cmid) / cmid**0.5)

    def forward(self, x):
        h = torch.relu(self.conv(x))
        return torch.einsum("oc,bchw->bohw", self.mix, h)


def get_inputs():
    return [torch.randn(8, 16, 32, 32)]


def get_init_inputs():
    return [16, 64, 32]


def get_cpu_inputs():
    return [torch.randn(2, 3, 6, 5)]


def get_cpu_init_inputs():
    return [3, 8, 4]
