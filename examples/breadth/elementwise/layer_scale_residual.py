"""CaiT/ConvNeXt layer scale: residual + gamma[c] * branch."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(1e-1 * torch.randn(dim))

    def forward(self, x, branch):
        return x + self.gamma * branch


def get_inputs():
    return [torch.randn(32, 576, 768), torch.randn(32, 576, 768)]


def get_init_inputs():
    return [768]


def get_shape_variants():
    return [[torch.randn(1, 4, 768), torch.randn(1, 4, 768)]]


def get_cpu_inputs():
    return [torch.randn(2, 7, 12), torch.randn(2, 7, 12)]


def get_cpu_init_inputs():
    return [12]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 12), torch.randn(1, 1, 12)]]
