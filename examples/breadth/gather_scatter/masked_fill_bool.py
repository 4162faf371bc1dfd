"""Attention-score masking with a boolean mask input: masked_fill(mask, -1e4)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, scores, mask):
        return scores.masked_fill(mask, -1e4)


def get_inputs():
    return [torch.randn(16, 16, 512, 512), torch.rand(16, 1, 512, 512) > 0.5]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 16, 1, 512), torch.rand(1, 1, 1, 512) > 0.5]]


def get_cpu_inputs():
    return [torch.randn(2, 2, 3, 5), torch.rand(2, 1, 3, 5) > 0.5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 1, 3), torch.rand(1, 1, 1, 3) > 0.5]]
