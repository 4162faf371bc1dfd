"""Sequence mean pooling over valid tokens: sum(x * mask) / count, count clamped at 1."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, mask):
        summed = (x * mask[..., None]).sum(dim=1)
        count = mask.sum(dim=1, keepdim=True).clamp(min=1.0)
        return summed / count


def get_inputs():
    return [torch.randn(64, 512, 768), (torch.rand(64, 512) > 0.3).float()]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 8, 768), (torch.rand(1, 8) > 0.3).float()]]


def get_cpu_inputs():
    return [torch.randn(2, 6, 5), (torch.rand(2, 6) > 0.3).float()]


def get_cpu_shape_variants():
    return [[torch.randn(3, 2, 4), (torch.rand(3, 2) > 0.3).float()]]
