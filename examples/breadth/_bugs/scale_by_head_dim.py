"""Reproducer: a scale computed from an input size, x * x.shape[-1] ** -0.5 (the 1/sqrt(d) of every attention
layer that reads d from its input). The template writer traces the float constant per captured shape and can only
name an input dim or a constructor argument, not a function of one: "size-dependent constant: values [0.35, 0.125,
...] match no constructor argument". Found through matmul/qk_scores_4d."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return x * x.shape[-1] ** -0.5


def get_inputs():
    return [torch.randn(4, 16, 1024, 64)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(1, 2, 5, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1, 3, 4)]]
