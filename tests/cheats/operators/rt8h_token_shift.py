"""Reference: RWKV's token shift, each position mixed with the previous one (zero before the first) by a learned
per-channel ratio: xx = F.pad(x, (0, 0, 1, -1)) (time shifted by one), y = x * mu + xx * (1 - mu)."""

import torch
from torch import nn
from torch.nn import functional as F


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.mu = nn.Parameter(torch.rand(dim))

    def forward(self, x):
        xx = F.pad(x, (0, 0, 1, -1))
        return x * self.mu + xx * (1 - self.mu)


def get_inputs():
    return [torch.randn(8, 1024, 768)]


def get_init_inputs():
    return [768]


def get_cpu_inputs():
    return [torch.randn(2, 6, 8)]


def get_cpu_init_inputs():
    return [8]
