"""Reproducer: a sum over the middle dim of a product with a broadcast operand, (x * m[..., None]).sum(dim=1).
The middle-dim reduction launcher the template writer emits computes the broadcast operand's strides with the
builtin next(...), which the product's own static guard forbids ("use of the builtin 'next' is not allowed"), so
every candidate is rejected. Found through reduction/masked_mean_pool."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, m):
        return (x * m[..., None]).sum(dim=1)


def get_inputs():
    return [torch.randn(64, 512, 768), torch.rand(64, 512)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 6, 5), torch.rand(2, 6)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 2, 4), torch.rand(3, 2)]]
