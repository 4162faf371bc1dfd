"""Per-row biased variance and mean (two outputs), as in hand-written normalization statistics."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, correction=0)
        return var, mean


def get_inputs():
    return [torch.randn(8192, 4096)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 4096)]]


def get_cpu_inputs():
    return [torch.randn(5, 19)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3)]]
