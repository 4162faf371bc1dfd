"""Mamba-style causal depthwise conv1d: pad k-1, keep the first L outputs, SiLU."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels, kernel):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, groups=channels, padding=kernel - 1)

    def forward(self, x):
        return F.silu(self.conv(x)[..., : x.shape[-1]])


def get_inputs():
    return [torch.randn(8, 1536, 2048)]


def get_init_inputs():
    return [1536, 4]


def get_shape_variants():
    return [[torch.randn(1, 1536, 4)]]


def get_cpu_inputs():
    return [torch.randn(2, 4, 9)]


def get_cpu_init_inputs():
    return [4, 4]


def get_cpu_shape_variants():
    return [[torch.randn(1, 4, 2)]]
