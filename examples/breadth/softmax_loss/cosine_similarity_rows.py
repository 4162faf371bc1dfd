"""Cosine similarity between paired embeddings along the feature dim."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, a, b):
        return F.cosine_similarity(a, b, dim=-1, eps=1e-8)


def get_inputs():
    return [torch.randn(65536, 512), torch.randn(65536, 512)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 512), torch.randn(2, 512)]]


def get_cpu_inputs():
    return [torch.randn(7, 10), torch.randn(7, 10)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3), torch.randn(1, 3)]]
