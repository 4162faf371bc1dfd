"""Batched matmul of attention-shaped operands: (b, m, k) @ (b, k, n) in fp32."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(64, 1024, 512), torch.randn(64, 512, 1024)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 20, 12), torch.randn(3, 12, 18)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 7, 33), torch.randn(2, 33, 5)]]
