"""Reference: SiLU applied after the exact (erf) GELU, elementwise."""

import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.silu(F.gelu(x))


def get_inputs():
    return [torch.randn(1024, 4096)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(6, 16)]


def get_cpu_shape_variants():
    return [[torch.randn(5, 7)]]
