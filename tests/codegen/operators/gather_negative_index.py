"""Test operator (gathers): advanced indexing x[idx] whose indices include negative ones (counted from the end,
as torch's indexing allows), then an elementwise tail."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, idx):
        return torch.tanh(x[idx] * 2.0)


def get_inputs():
    return [torch.randn(512, 64), torch.randint(-512, 512, (128,))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(9, 5), torch.tensor([-1, 0, -9, 8, 3, -4])]


def get_cpu_shape_variants():
    return [[torch.randn(3, 2), torch.tensor([-3, 2, -1])]]
