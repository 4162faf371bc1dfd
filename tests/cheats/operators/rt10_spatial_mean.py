"""Reference: the mean over the spatial dimensions of an NCHW activation (global average pooling)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(32, 256, 14, 14)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 3, 5, 7)]
