"""Test operator (hybrid fallback): values picked by two index tensors, x[rows, cols] (aten.index with two tensors:
a library call under the hybrid policy; one index tensor would be a gather kernel), then an elementwise epilogue
and a row sum in Triton."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, rows, cols):
        values = x[rows[:, None], cols]
        return torch.relu(values * 2.0 - 1.0).sum(dim=-1)


def get_inputs():
    return [torch.randn(512, 128), torch.randint(0, 512, (256,)), torch.randint(0, 128, (256, 16))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(6, 5), torch.randint(0, 6, (4,)), torch.randint(0, 5, (4, 3))]


def get_cpu_shape_variants():
    return [[torch.randn(3, 5), torch.randint(0, 3, (2,)), torch.randint(0, 5, (2, 3))]]
