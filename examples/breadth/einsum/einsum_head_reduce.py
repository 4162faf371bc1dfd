"""Per-head weighted feature sum einsum('bhnd,hd->bhn') (attention pooling query)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, heads, dim):
        super().__init__()
        self.query = nn.Parameter(torch.randn(heads, dim))

    def forward(self, x):
        return torch.einsum("bhnd,hd->bhn", x, self.query)


def get_inputs():
    return [torch.randn(32, 8, 1024, 64)]


def get_init_inputs():
    return [8, 64]


def get_shape_variants():
    return [[torch.randn(1, 8, 4, 64)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 5, 4)]


def get_cpu_init_inputs():
    return [3, 4]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 1, 4)]]
