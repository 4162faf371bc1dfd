"""Test operator (scans): an fp16 running sum of an elementwise product, accumulated in fp32 and stored in fp16."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def forward(self, x, w):
        return torch.cumsum(x * w, dim=-1) * 0.125


def get_inputs():
    return [torch.randn(64, 512, dtype=torch.float16), torch.randn(512, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(3, 40, dtype=torch.float16), torch.randn(40, dtype=torch.float16)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 9, dtype=torch.float16), torch.randn(9, dtype=torch.float16)]]
