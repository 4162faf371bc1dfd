"""Test operator (gathers, training): torch.gather along the last dim, scaled. Its backward adds the upstream
gradient into zeros at the same indices (new_zeros(...).scatter_add): a gather kernel forward, a scatter kernel
(atomic adds) backward."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def forward(self, x, index):
        return torch.gather(x, 1, index) * 2.0


def get_inputs():
    return [torch.randn(64, 128), torch.randint(0, 128, (64, 16))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 5), torch.randint(0, 5, (3, 2))]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3), torch.randint(0, 3, (2, 4))]]
