"""Test operator (gathers): advanced indexing by two index tensors x[rows, cols] (aten.index with two tensors):
the template refuses it (unsupported, naming aten.index.Tensor)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, rows, cols):
        return x[rows, cols] + 1.0


def get_inputs():
    return [torch.randn(64, 32), torch.randint(0, 64, (16,)), torch.randint(0, 32, (16,))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(5, 6), torch.randint(0, 5, (3,)), torch.randint(0, 6, (3,))]
