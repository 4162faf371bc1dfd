"""Reproducer: a 4-D einsum, torch.einsum("bhqd,bhkd->bhqk", q, k). The template writer stops with "size-dependent
constant: values [...] match no constructor argument": einsum's lowering folds b * h into one dim, and the writer
resolves a captured size only to a single input dim or a constructor argument. The same computation written by
hand (q.reshape(b * h, t, d) bmm k.reshape(b * h, t, d).transpose(1, 2), then view) is verified."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k):
        return torch.einsum("bhqd,bhkd->bhqk", q, k)


def get_inputs():
    return [torch.randn(4, 16, 512, 64), torch.randn(4, 16, 512, 64)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 3, 4), torch.randn(2, 3, 3, 4)]]
