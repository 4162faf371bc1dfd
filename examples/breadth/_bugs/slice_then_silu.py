"""Reproducer: a basic slice (a view op, allowed even under strict) in front of an elementwise op. The template
writer reports "aten.slice.Tensor: no Triton template for this op" under strict and hybrid, so the causal
depthwise conv1d of Mamba (conv, keep the first L steps, SiLU) gets nothing."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return F.silu(x[..., : x.shape[-1] - 3])


def get_inputs():
    return [torch.randn(8, 1536, 2051)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(2, 4, 12)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 4, 5)]]
