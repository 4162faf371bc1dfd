"""Additive (Bahdanau) attention features: tanh(q[:, i] + k[:, j]) for every pair, a rank-4 broadcast."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k):
        return torch.tanh(q[:, :, None, :] + k[:, None, :, :])


def get_inputs():
    return [torch.randn(8, 256, 128), torch.randn(8, 192, 128)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 4, 128), torch.randn(1, 6, 128)]]


def get_cpu_inputs():
    return [torch.randn(2, 5, 4), torch.randn(2, 3, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 3), torch.randn(1, 2, 3)]]
