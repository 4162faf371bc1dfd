"""Top-k values and indices per row (beam search / retrieval)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        values, indices = torch.topk(x, self.k, dim=-1)
        return values, indices


def get_inputs():
    return [torch.randn(4096, 32000)]


def get_init_inputs():
    return [50]


def get_shape_variants():
    return [[torch.randn(1, 32000)]]


def get_cpu_inputs():
    return [torch.randn(5, 26)]


def get_cpu_init_inputs():
    return [4]


def get_cpu_shape_variants():
    return [[torch.randn(2, 7)]]
