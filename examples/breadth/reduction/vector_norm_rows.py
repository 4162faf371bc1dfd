"""L2 norm of each row with torch.linalg.vector_norm (gradient clipping style statistic)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.linalg.vector_norm(x, ord=2, dim=-1)


def get_inputs():
    return [torch.randn(32, 2048, 1024)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 17)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 4)]]
