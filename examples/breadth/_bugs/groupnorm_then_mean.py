"""Reproducer: GroupNorm (affine) followed by a spatial mean. The fused mean row-loop kernel reads the norm's
weight/bias (norm_weight_ptr, norm_bias_ptr) and CH_TILE/G/CPG/HW it was never given, so the static guard rejects
every template candidate ("use of the builtin 'CH_TILE' is not allowed")."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return self.norm(x).mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(64, 64, 62, 62)]


def get_init_inputs():
    return [8, 64]


def get_cpu_inputs():
    return [torch.randn(2, 6, 4, 5)]


def get_cpu_init_inputs():
    return [2, 6]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6, 3, 3)]]
