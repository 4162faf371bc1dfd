"""LLaMA feed-forward in bf16: w2(silu(w1 x) * w3 x), no biases."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "bf16"


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False).to(torch.bfloat16)
        self.w2 = nn.Linear(hidden, dim, bias=False).to(torch.bfloat16)
        self.w3 = nn.Linear(dim, hidden, bias=False).to(torch.bfloat16)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def get_inputs():
    return [torch.randn(4, 2048, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return [4096, 11008]


def get_shape_variants():
    return [[torch.randn(1, 1, 4096, dtype=torch.bfloat16)]]


def get_cpu_inputs():
    return [torch.randn(1, 3, 8, dtype=torch.bfloat16)]


def get_cpu_init_inputs():
    return [8, 12]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1, 8, dtype=torch.bfloat16)]]
