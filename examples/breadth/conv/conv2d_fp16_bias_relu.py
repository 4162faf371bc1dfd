"""fp16 3x3 conv with bias and ReLU (tensor-core convolution on GPU)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1).to(torch.float16)

    def forward(self, x):
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(32, 64, 56, 56, dtype=torch.float16)]


def get_init_inputs():
    return [64, 64]


def get_shape_variants():
    return [[torch.randn(1, 64, 7, 7, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 5, 6, dtype=torch.float16)]


def get_cpu_init_inputs():
    return [3, 4]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 3, 3, dtype=torch.float16)]]
