"""logsumexp over the last dim (online max + sum; 16384 x 8192 fp32 = 512 MB read)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.logsumexp(x, dim=-1)


def get_inputs():
    return [torch.randn(16384, 8192)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(6, 70)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 333)]]
