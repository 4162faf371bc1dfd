"""LayerNorm over the hidden dim with affine parameters (8 x 2048 x 4096 fp32, ~512 MB moved)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(8, 2048, 4096)]


def get_init_inputs():
    return [4096]


def get_cpu_inputs():
    return [torch.randn(2, 3, 48)]


def get_cpu_init_inputs():
    return [48]


def get_cpu_shape_variants():
    return [[torch.randn(5, 48)]]
