"""Indices that sort each row in descending order (ranking)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, scores):
        return torch.argsort(scores, dim=-1, descending=True)


def get_inputs():
    return [torch.randn(4096, 2048)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 64)]]


def get_cpu_inputs():
    return [torch.randn(4, 19)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5)]]
