"""A masked sum over the middle dim: (x * m[..., None]).sum(dim=1), the mask broadcast over the last dim (a strided
broadcast operand of a middle-dim reduction)."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, m):
        return (x * m[..., None]).sum(dim=1)


def get_inputs():
    return [torch.randn(4, 64, 96), torch.rand(4, 64)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 6, 5), torch.rand(2, 6)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 2, 4), torch.rand(3, 2)]]
