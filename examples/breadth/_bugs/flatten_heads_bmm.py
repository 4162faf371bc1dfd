"""Reproducer: folding batch and heads into one dim (b * h) before a bmm, as einsum's own lowering does. The
template writer resolves each captured size to one input dim or constructor argument, never a product of input
dims, so it stops with "size-dependent constant: values [...] match no constructor argument" (the same message
every einsum operator of the suite gets)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, q, k):
        b, h, t, d = q.shape
        s = torch.bmm(q.reshape(b * h, t, d), k.reshape(b * h, t, d).transpose(1, 2))
        return s.view(b, h, t, t)


def get_inputs():
    return [torch.randn(4, 16, 512, 64), torch.randn(4, 16, 512, 64)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 3, 4), torch.randn(2, 3, 3, 4)]]
