"""Divide a tensor by its Frobenius norm (a full reduction then an elementwise pass; 512 MB in and out)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x / torch.norm(x, p="fro")


def get_inputs():
    return [torch.randn(8192, 8192)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(9, 31)]


def get_cpu_shape_variants():
    return [[torch.randn(4, 5)]]
