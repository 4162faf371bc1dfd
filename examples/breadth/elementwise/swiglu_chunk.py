"""SwiGLU on one fused projection: split the last dim in two halves, silu(first) * second."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        x1, x2 = x.chunk(2, dim=-1)
        return F.silu(x1) * x2


def get_inputs():
    return [torch.randn(4096, 22016)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 22016)]]


def get_cpu_inputs():
    return [torch.randn(5, 36)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 14)]]
