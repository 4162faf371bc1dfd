"""Batched matmul written as einsum('bij,bjk->bik')."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, a, b):
        return torch.einsum("bij,bjk->bik", a, b)


def get_inputs():
    return [torch.randn(64, 512, 256), torch.randn(64, 256, 512)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 8, 256), torch.randn(2, 256, 8)]]


def get_cpu_inputs():
    return [torch.randn(2, 7, 5), torch.randn(2, 5, 6)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 3), torch.randn(1, 3, 2)]]
