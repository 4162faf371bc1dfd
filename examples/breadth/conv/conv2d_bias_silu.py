"""3x3 conv with bias, padding 1, then SiLU (EfficientNet / YOLO stage)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1)

    def forward(self, x):
        return F.silu(self.conv(x))


def get_inputs():
    return [torch.randn(16, 64, 128, 128)]


def get_init_inputs():
    return [64, 128]


def get_shape_variants():
    return [[torch.randn(1, 64, 8, 8)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 6, 7)]


def get_cpu_init_inputs():
    return [3, 4]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 3, 4)]]
