"""Test operator (hybrid fallback): each row repeated along the last dim (repeat, a library call under the hybrid
policy), then a layer norm without affine and a GELU in Triton."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, times):
        super().__init__()
        self.times = times

    def forward(self, x):
        tiled = x.repeat(1, self.times)
        return F.gelu(F.layer_norm(tiled, (tiled.shape[-1],)))


def get_inputs():
    return [torch.randn(128, 96)]


def get_init_inputs():
    return [2]


def get_cpu_inputs():
    return [torch.randn(4, 6)]


def get_cpu_init_inputs():
    return [3]


def get_cpu_shape_variants():
    return [[torch.randn(2, 6)]]
