"""Test operator (scans): a running log-sum-exp (tl.associative_scan with a log-add-exp combine, carried across tiles
when scan.BLOCK_N=256 in the test), minus the input."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.logcumsumexp(x * 3.0, dim=-1) - x


def get_inputs():
    return [torch.randn(64, 1024)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 300)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6)]]
