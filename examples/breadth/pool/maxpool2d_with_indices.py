"""Max pooling that also returns argmax indices (SegNet encoder, for unpooling later)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        values, indices = F.max_pool2d(x, 2, return_indices=True)
        return values, indices


def get_inputs():
    return [torch.randn(16, 64, 128, 128)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 64, 4, 4)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 6, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 2, 6)]]
