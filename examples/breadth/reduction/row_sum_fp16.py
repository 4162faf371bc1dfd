"""Row sums of an fp16 tensor (fp16 in, fp16 out)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=-1)


def get_inputs():
    return [torch.randn(16384, 4096, dtype=torch.float16)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 4096, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(4, 30, dtype=torch.float16)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, dtype=torch.float16)]]
