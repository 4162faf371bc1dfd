"""bf16 1x1 conv (channel mixing) followed by GELU."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "bf16"


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 1).to(torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.conv(x))


def get_inputs():
    return [torch.randn(32, 256, 28, 28, dtype=torch.bfloat16)]


def get_init_inputs():
    return [256, 512]


def get_shape_variants():
    return [[torch.randn(1, 256, 7, 7, dtype=torch.bfloat16)]]


def get_cpu_inputs():
    return [torch.randn(2, 6, 4, 5, dtype=torch.bfloat16)]


def get_cpu_init_inputs():
    return [6, 5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6, 1, 2, dtype=torch.bfloat16)]]
