"""Mixture-of-experts router: gate Linear, top-k experts, softmax over the chosen logits."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, dim, experts, k):
        super().__init__()
        self.gate = nn.Linear(dim, experts, bias=False)
        self.k = k

    def forward(self, x):
        logits = self.gate(x)
        values, indices = torch.topk(logits, self.k, dim=-1)
        return torch.softmax(values, dim=-1), indices


def get_inputs():
    return [torch.randn(16384, 4096)]


def get_init_inputs():
    return [4096, 64, 2]


def get_shape_variants():
    return [[torch.randn(4, 4096)]]


def get_cpu_inputs():
    return [torch.randn(7, 12)]


def get_cpu_init_inputs():
    return [12, 6, 2]


def get_cpu_shape_variants():
    return [[torch.randn(1, 12)]]
