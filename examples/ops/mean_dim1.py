"""Mean over the middle dimension of a (batch, seq, hidden) tensor (strided reduction, 512 MB read)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=1)


def get_inputs():
    return [torch.randn(32, 1024, 4096)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 37, 20)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 9, 70)]]
