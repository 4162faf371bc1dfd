"""Test operator (hybrid fallback): the k largest logits of each row (topk, a library call under the hybrid policy)
scaled by a softmax over them in Triton; returns the weights and the chosen indices (an MoE router)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, logits):
        values, indices = torch.topk(logits, self.k, dim=-1)
        return torch.softmax(values * 2.0, dim=-1), indices


def get_inputs():
    return [torch.randn(256, 64)]


def get_init_inputs():
    return [4]


def get_cpu_inputs():
    return [torch.randn(5, 9)]


def get_cpu_init_inputs():
    return [3]


def get_cpu_shape_variants():
    return [[torch.randn(2, 9)]]
