"""Reference: a ConvNeXt-style token mixer, a depthwise 7x7 convolution plus a pointwise channel projection written as
an einsum (y = dwconv7x7(x) + P x). The depthwise convolution is 49 multiply-adds per output and memory-bound; the
projection is the matrix product (C multiply-adds per output) that a GPU runs on its tensor cores."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.dw = nn.Conv2d(channels, channels, 7, padding=3, groups=channels, bias=False)
        self.proj = nn.Parameter(torch.randn(channels, channels) / channels**0.5)

    def forward(self, x):
        return self.dw(x) + torch.einsum("oc,bchw->bohw", self.proj, x)


def get_inputs():
    return [torch.randn(16, 48, 56, 56)]


def get_init_inputs():
    return [48]


def get_cpu_inputs():  # small: each of the N*C planes is a program of 49 unrolled taps under the interpreter
    return [torch.randn(1, 4, 9, 11)]


def get_cpu_init_inputs():
    return [4]
