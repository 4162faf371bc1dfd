"""Batched matmul followed by a constant scale."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, a, b):
        return torch.bmm(a, b) * self.scale


def get_inputs():
    return [torch.randn(64, 512, 256), torch.randn(64, 256, 512)]


def get_init_inputs():
    return [0.125]


def get_shape_variants():
    return [[torch.randn(4, 16, 256), torch.randn(4, 256, 16)]]


def get_cpu_inputs():
    return [torch.randn(3, 9, 7), torch.randn(3, 7, 10)]


def get_cpu_init_inputs():
    return [0.125]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 5), torch.randn(1, 5, 3)]]
