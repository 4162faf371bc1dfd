"""Test operator (hybrid fallback): a running log-sum-exp alone. Nothing would be left for Triton: unsupported under
both policies (the writer names the op rather than wrapping the library call in a copy kernel)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.logcumsumexp(x, dim=-1)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 7)]
