"""Index of the row maximum (argmax over the last dim, 512 MB read)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.argmax(x, dim=1)


def get_inputs():
    return [torch.randn(4096, 32768)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(9, 45)]


def get_cpu_shape_variants():
    return [[torch.randn(4, 200)]]
