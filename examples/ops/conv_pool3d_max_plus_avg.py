"""Dilated max pooling 3d (kernel 2, stride 2, padding 1, dilation 2) of a volume plus an average pooling 3d
of the same volume (kernel 2, stride 2), summed: one kernel computes both windows per output and adds them
(fp32).

GPU size: 4 x 32 x 32 x 64 x 128 in (~134 MB), 4 x 32 x 16 x 32 x 64 out (~17 MB)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        a = nn.functional.max_pool3d(x, 2, stride=2, padding=1, dilation=2)
        b = nn.functional.avg_pool3d(x, 2, stride=2)
        return a + b


def get_inputs():
    return [torch.randn(4, 32, 32, 64, 128)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 3, 6, 4, 8)]


def get_cpu_init_inputs():
    return []


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 4, 6, 2)]]
