"""Reference: a per-row mean-squared error scaled by 1e-6. Every output is ~2e-6, far below the fp32
atol of 1e-4, so zeros or a constant would pass a naive check: the evaluator must strengthen it."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return ((pred - target) ** 2).mean(dim=-1) * 1e-6


def get_inputs():
    return [torch.randn(1024, 4096), torch.randn(1024, 4096)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(8, 32), torch.randn(8, 32)]


def get_cpu_shape_variants():
    return [[torch.randn(5, 48), torch.randn(5, 48)]]


def get_shape_variants():
    return [[torch.randn(300, 3000), torch.randn(300, 3000)]]
