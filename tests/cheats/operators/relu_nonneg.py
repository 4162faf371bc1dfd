"""Reference: ReLU, whose declared inputs happen to be non-negative (torch.rand): on them ReLU is the identity."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(256, 1024)]


def get_cpu_inputs():
    return [torch.rand(6, 40)]


def get_init_inputs():
    return []
