"""fp16 conv block: 3x3 conv, GroupNorm, SiLU, 3x3 conv (a diffusion ResBlock half)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def __init__(self, c_in, c_out, groups):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1).to(torch.float16)
        self.norm = nn.GroupNorm(groups, c_out).to(torch.float16)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1).to(torch.float16)

    def forward(self, x):
        return self.conv2(F.silu(self.norm(self.conv1(x))))


def get_inputs():
    return [torch.randn(8, 128, 64, 64, dtype=torch.float16)]


def get_init_inputs():
    return [128, 128, 32]


def get_shape_variants():
    return [[torch.randn(1, 128, 8, 8, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(1, 3, 4, 5, dtype=torch.float16)]


def get_cpu_init_inputs():
    return [3, 4, 2]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 3, 2, dtype=torch.float16)]]
