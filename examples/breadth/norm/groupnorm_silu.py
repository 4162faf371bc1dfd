"""Diffusion UNet normalization: GroupNorm then SiLU on (B, C, H, W)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return F.silu(self.norm(x))


def get_inputs():
    return [torch.randn(8, 256, 64, 64)]


def get_init_inputs():
    return [32, 256]


def get_shape_variants():
    return [[torch.randn(1, 256, 4, 4)]]


def get_cpu_inputs():
    return [torch.randn(2, 6, 4, 5)]


def get_cpu_init_inputs():
    return [3, 6]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6, 1, 3)]]
