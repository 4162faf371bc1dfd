"""Per-sample outer product einsum('bi,bj->bij') (bilinear pooling features)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, a, b):
        return torch.einsum("bi,bj->bij", a, b)


def get_inputs():
    return [torch.randn(256, 512), torch.randn(256, 512)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 512), torch.randn(1, 512)]]


def get_cpu_inputs():
    return [torch.randn(3, 7), torch.randn(3, 5)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2), torch.randn(1, 3)]]
