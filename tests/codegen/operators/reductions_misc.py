"""Test operator: several reductions of one tensor along the last dim (max values, variance, L1 norm,
std, min) combined elementwise; exercises shared passes and per-row epilogues."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        peak = torch.max(x, dim=-1).values
        spread = x.var(dim=-1) + x.std(dim=-1, keepdim=False)
        l1 = torch.linalg.vector_norm(x, ord=1, dim=-1)
        return peak * 0.5 + spread - l1 / x.shape[-1] + torch.amin(x, dim=-1)


def get_inputs():
    return [torch.randn(4, 5, 37)]


def get_init_inputs():
    return []


def get_cpu_shape_variants():
    return [[torch.randn(3, 2, 9)]]
