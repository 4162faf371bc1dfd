"""Reference: GEGLU, the last dimension split in halves: gelu(a) * b (exact erf GELU)."""

import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        a, b = x.chunk(2, dim=-1)
        return F.gelu(a) * b


def get_inputs():
    return [torch.randn(512, 8192)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(6, 40)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 24)]]
