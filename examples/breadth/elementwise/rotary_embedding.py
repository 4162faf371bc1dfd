"""Rotary position embedding (rotate-half form) on (B, H, T, D) with cos/sin tables (T, D)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, cos, sin):
        half = x.shape[-1] // 2
        x1, x2 = x[..., :half], x[..., half:]
        rotated = torch.cat((-x2, x1), dim=-1)
        return x * cos + rotated * sin


def get_inputs():
    return [torch.randn(4, 32, 2048, 128), torch.randn(2048, 128), torch.randn(2048, 128)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 32, 1, 128), torch.randn(1, 128), torch.randn(1, 128)]]


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 8), torch.randn(5, 8), torch.randn(5, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1, 3, 4), torch.randn(3, 4), torch.randn(3, 4)]]
