"""fp16 inference: relu(x + bias) with an fp16 bias parameter."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(dim, dtype=torch.float16))

    def forward(self, x):
        return torch.relu(x + self.bias)


def get_inputs():
    return [torch.randn(8192, 8192, dtype=torch.float16)]


def get_init_inputs():
    return [8192]


def get_shape_variants():
    return [[torch.randn(3, 8192, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(6, 20, dtype=torch.float16)]


def get_cpu_init_inputs():
    return [20]


def get_cpu_shape_variants():
    return [[torch.randn(1, 20, dtype=torch.float16)]]
