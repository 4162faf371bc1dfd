"""Test operator (scatters): index_add along the middle dim of a (B, S, C) base tensor (an input, copied: the
operator is out of place) of a relu'd (B, K, C) source, indices repeated (several slices add into one)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, base, index, src):
        return base.index_add(1, index, torch.relu(src))


def get_inputs():
    return [torch.randn(4, 64, 32), torch.randint(0, 64, (128,)), torch.randn(4, 128, 32)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 5, 3), torch.tensor([4, 0, 4, 2, 4, 1, 0]), torch.randn(2, 7, 3)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 2), torch.tensor([1, 1, 0]), torch.randn(1, 3, 2)]]
