"""Segmentation head: log_softmax over the class dim (dim 1) of (B, K, H, W)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return F.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(16, 21, 256, 256)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 21, 8, 8)]]


def get_cpu_inputs():
    return [torch.randn(2, 5, 3, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 1, 2)]]
