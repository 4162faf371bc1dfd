"""Row softmax over the last dimension of a wide activation (the README's demo operator).

Memory-bound: 8192 x 16384 fp32 in and out = 1 GiB moved on GPU.
"""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(8192, 16384)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(6, 40)]


def get_shape_variants():
    return [[torch.randn(4096, 30000)]]


def get_cpu_shape_variants():
    return [[torch.randn(3, 129)]]
