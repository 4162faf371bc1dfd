"""Classifier head with few outputs: (M, 4096) @ W.T, W of 8 rows (tall-skinny GEMM)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, d_in, classes):
        super().__init__()
        self.head = nn.Linear(d_in, classes)

    def forward(self, x):
        return self.head(x)


def get_inputs():
    return [torch.randn(65536, 4096)]


def get_init_inputs():
    return [4096, 8]


def get_shape_variants():
    return [[torch.randn(2, 4096)]]


def get_cpu_inputs():
    return [torch.randn(17, 24)]


def get_cpu_init_inputs():
    return [24, 3]


def get_cpu_shape_variants():
    return [[torch.randn(1, 24)]]
