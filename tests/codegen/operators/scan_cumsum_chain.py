"""Test operator (scans): a masked running mean, torch.cumsum(x * mask, -1) / length, with a sigmoid after it:
one scan kernel with the elementwise ops before and after the scan."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, mask, length):
        return torch.sigmoid(torch.cumsum(x * mask, dim=-1) / length)


def get_inputs():
    return [torch.randn(64, 256), (torch.rand(64, 256) > 0.3).float(), torch.rand(64, 1) * 10 + 1]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 11), (torch.rand(3, 11) > 0.3).float(), torch.rand(3, 1) * 10 + 1]


def get_cpu_shape_variants():
    return [[torch.randn(2, 5), (torch.rand(2, 5) > 0.3).float(), torch.rand(2, 1) * 10 + 1]]
