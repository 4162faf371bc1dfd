"""Bilinear layer as einsum('bi,oij,bj->bo') with a weight parameter (three operands)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, d1, d2, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d1, d2) / (d1 * d2) ** 0.5)

    def forward(self, x1, x2):
        return torch.einsum("bi,oij,bj->bo", x1, self.weight, x2)


def get_inputs():
    return [torch.randn(1024, 256), torch.randn(1024, 256)]


def get_init_inputs():
    return [256, 256, 128]


def get_shape_variants():
    return [[torch.randn(2, 256), torch.randn(2, 256)]]


def get_cpu_inputs():
    return [torch.randn(4, 5), torch.randn(4, 6)]


def get_cpu_init_inputs():
    return [5, 6, 3]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5), torch.randn(1, 6)]]
