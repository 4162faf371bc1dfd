"""Reference: a two-layer perceptron, Linear -> ReLU -> Linear, in an nn.Sequential."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, out_features))

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024, 4096, 1024]


def get_cpu_inputs():
    return [torch.randn(6, 16)]


def get_cpu_init_inputs():
    return [16, 32, 8]


def get_cpu_shape_variants():
    return [[torch.randn(3, 16)]]
