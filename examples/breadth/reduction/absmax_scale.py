"""Per-row int8 quantization scale: amax(|x|) / 127, kept as a column."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return x.abs().amax(dim=-1, keepdim=True) / 127.0


def get_inputs():
    return [torch.randn(16384, 4096)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 4096)]]


def get_cpu_inputs():
    return [torch.randn(7, 21)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5)]]
