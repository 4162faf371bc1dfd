"""Whole attention in einsum: softmax(einsum(q, k) * scale) then einsum with v."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k, v):
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * (q.shape[-1] ** -0.5)
        probs = scores.softmax(dim=-1)
        return torch.einsum("bhqk,bhkd->bhqd", probs, v)


def get_inputs():
    return [torch.randn(4, 16, 1024, 64), torch.randn(4, 16, 1024, 64), torch.randn(4, 16, 1024, 64)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 16, 8, 64), torch.randn(1, 16, 8, 64), torch.randn(1, 16, 8, 64)]]


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1, 3, 4), torch.randn(2, 1, 3, 4), torch.randn(2, 1, 3, 4)]]
