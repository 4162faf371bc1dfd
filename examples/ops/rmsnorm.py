"""RMSNorm written out by hand, as in many LLM codebases (16384 x 4096 fp32, 512 MB moved)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(16384, 4096)]


def get_init_inputs():
    return [4096]


def get_cpu_inputs():
    return [torch.randn(6, 40)]


def get_cpu_init_inputs():
    return [40]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 40)]]
