"""2x2 average pooling with stride 2 (DenseNet transition)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return F.avg_pool2d(x, 2)


def get_inputs():
    return [torch.randn(32, 128, 56, 56)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 128, 4, 4)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 6, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 3, 5)]]
