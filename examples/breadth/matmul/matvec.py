"""Matrix-vector product W @ v (a GEMV, memory bound)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, w, v):
        return w @ v


def get_inputs():
    return [torch.randn(16384, 8192), torch.randn(8192)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(64, 8192), torch.randn(8192)]]


def get_cpu_inputs():
    return [torch.randn(13, 21), torch.randn(21)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5), torch.randn(5)]]
