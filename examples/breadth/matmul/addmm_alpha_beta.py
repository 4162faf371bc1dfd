"""GEMM with scaled accumulate: beta * C + alpha * (A @ B)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, c, a, b):
        return torch.addmm(c, a, b, beta=0.5, alpha=2.0)


def get_inputs():
    return [torch.randn(4096, 4096), torch.randn(4096, 2048), torch.randn(2048, 4096)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(8, 64), torch.randn(8, 512), torch.randn(512, 64)]]


def get_cpu_inputs():
    return [torch.randn(7, 9), torch.randn(7, 11), torch.randn(11, 9)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2), torch.randn(1, 3), torch.randn(3, 2)]]
