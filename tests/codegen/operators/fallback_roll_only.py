"""Test operator (hybrid fallback): a roll alone. Nothing would be left for Triton: unsupported under
both policies (the writer names the op rather than wrapping the library call in a copy kernel)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return torch.roll(x, shifts=1, dims=-1)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 7)]
