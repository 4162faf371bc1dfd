"""Gemma-style logit soft-capping on fp16 logits, computed in fp32: cap * tanh(x / cap)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def __init__(self, cap):
        super().__init__()
        self.cap = cap

    def forward(self, x):
        y = torch.tanh(x.float() / self.cap) * self.cap
        return y.to(x.dtype)


def get_inputs():
    return [torch.randn(16, 256000, dtype=torch.float16)]


def get_init_inputs():
    return [30.0]


def get_shape_variants():
    return [[torch.randn(1, 256000, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(3, 50, dtype=torch.float16)]


def get_cpu_init_inputs():
    return [2.0]


def get_cpu_shape_variants():
    return [[torch.randn(1, 7, dtype=torch.float16)]]
