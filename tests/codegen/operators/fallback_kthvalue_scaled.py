"""Test operator (hybrid fallback): the k-th smallest logit of each row with its index (kthvalue, a library call under
the hybrid policy: no template selects it) subtracted from the row in Triton; returns the margins and the indices."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, logits):
        values, indices = torch.kthvalue(logits, self.k, dim=-1, keepdim=True)
        return torch.relu(logits - values) * 2.0, indices


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
