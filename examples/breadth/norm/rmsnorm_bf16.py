"""LLaMA RMSNorm on bf16 activations: statistics in fp32, result cast back and scaled by a bf16 weight."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "bf16"


class Model(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter((1.0 + 0.1 * torch.randn(dim)).to(torch.bfloat16))
        self.eps = eps

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def get_inputs():
    return [torch.randn(8, 2048, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return [4096]


def get_shape_variants():
    return [[torch.randn(1, 1, 4096, dtype=torch.bfloat16)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 24, dtype=torch.bfloat16)]


def get_cpu_init_inputs():
    return [24]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 24, dtype=torch.bfloat16)]]
