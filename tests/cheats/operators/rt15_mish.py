"""Reference (red team round 15, written for this round): Mish, x * tanh(softplus(x)), elementwise."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.mish(x)


def get_inputs():
    return [torch.randn(4096, 4096)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(8, 64)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 130)]]
