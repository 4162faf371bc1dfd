"""Reference: a 3x3 convolution plus a projected shortcut (a per-pixel channel matrix product of the input, written
as an einsum: a batched matrix product, not a convolution), as in a ResNet block's projection."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.proj = nn.Parameter(torch.randn(cout, cin) / cin**0.5)

    def forward(self, x):
        return self.conv(x) + torch.einsum("oc,bchw->bohw", self.proj, x)


def get_inputs():
    return [torch.randn(8, 64, 32, 32)]


def get_init_inputs():
    return [64, 64]


def get_cpu_inputs():
    return [torch.randn(2, 3, 6, 5)]


def get_cpu_init_inputs():
    return [3, 4]
