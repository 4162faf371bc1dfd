"""Attention-probabilities style softmax on fp16 scores computed in fp32 and cast back."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def forward(self, x):
        return F.softmax(x, dim=-1, dtype=torch.float32).to(x.dtype)


def get_inputs():
    return [torch.randn(32, 16, 1024, 1024, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 16, 1, 1024, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 21, dtype=torch.float16)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 5, dtype=torch.float16)]]
