"""Encoder attention written out: scores, key-padding mask from lengths, softmax, @ v."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k, v, lengths):
        scores = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
        keep = torch.arange(k.shape[2], device=k.device)[None, :] < lengths[:, None]
        scores = scores.masked_fill(~keep[:, None, None, :], float("-inf"))
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    return [torch.randn(8, 12, 512, 64), torch.randn(8, 12, 512, 64), torch.randn(8, 12, 512, 64), torch.randint(1, 513, (8,))]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 12, 16, 64), torch.randn(2, 12, 16, 64), torch.randn(2, 12, 16, 64), torch.tensor([16, 7])]]


def get_cpu_inputs():
    return [torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), torch.tensor([5, 2])]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4), torch.randn(1, 1, 3, 4), torch.tensor([1])]]
