"""Test operator (scans): rows longer than one tile (scan.BLOCK_N=256 in the test): a cumsum and a reverse
cumsum (of positive values: no cancellation between long sums) walk their rows in tiles with a running carry."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        forward = torch.tanh(torch.cumsum(x.abs(), dim=-1) * 0.01)
        return forward + torch.flip(torch.cumsum(torch.flip(torch.sigmoid(x), dims=[-1]), dim=-1), dims=[-1])


def get_inputs():
    return [torch.randn(16, 4096)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 300)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 260)]]
