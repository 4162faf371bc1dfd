"""Batched matmul added onto a broadcast bias: baddbmm(bias, A, B) (Megatron attention scores)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, bias, a, b):
        return torch.baddbmm(bias, a, b, beta=1.0, alpha=0.125)


def get_inputs():
    return [torch.randn(1, 1024, 1024), torch.randn(64, 1024, 64), torch.randn(64, 64, 1024)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 8, 8), torch.randn(16, 8, 64), torch.randn(16, 64, 8)]]


def get_cpu_inputs():
    return [torch.randn(1, 5, 6), torch.randn(3, 5, 4), torch.randn(3, 4, 6)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 3), torch.randn(2, 2, 4), torch.randn(2, 4, 3)]]
