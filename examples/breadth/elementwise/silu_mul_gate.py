"""SwiGLU gate on two separate projections: silu(a) * b."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, a, b):
        return F.silu(a) * b


def get_inputs():
    return [torch.randn(8192, 11008), torch.randn(8192, 11008)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(4, 11008), torch.randn(4, 11008)]]


def get_cpu_inputs():
    return [torch.randn(6, 40), torch.randn(6, 40)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3), torch.randn(1, 3)]]
