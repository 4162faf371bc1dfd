"""GPT-style attention with a triu boolean mask built in forward and masked_fill(-inf)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k, v):
        t = q.shape[2]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=q.device), diagonal=1)
        scores = (q @ k.transpose(-2, -1)) * (q.shape[-1] ** -0.5)
        scores = scores.masked_fill(mask, float("-inf"))
        return F.softmax(scores, dim=-1) @ v


def get_inputs():
    return [torch.randn(4, 12, 1024, 64), torch.randn(4, 12, 1024, 64), torch.randn(4, 12, 1024, 64)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 12, 8, 64), torch.randn(1, 12, 8, 64), torch.randn(1, 12, 8, 64)]]


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 2, 3), torch.randn(1, 1, 2, 3), torch.randn(1, 1, 2, 3)]]
