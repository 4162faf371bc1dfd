"""Reference: a small linear layer, y = x @ W.T + b."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024, 768]


def get_cpu_inputs():
    return [torch.randn(8, 24)]


def get_cpu_init_inputs():
    return [24, 20]


def get_cpu_shape_variants():
    return [[torch.randn(5, 24)]]


def get_shape_variants():
    return [[torch.randn(300, 1024)]]
