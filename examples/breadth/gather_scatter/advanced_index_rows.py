"""Advanced indexing x[idx] with an int64 index tensor (aten.index)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, idx):
        return x[idx]


def get_inputs():
    return [torch.randn(65536, 512), torch.randint(0, 65536, (8192,))]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(512, 512), torch.randint(0, 512, (2,))]]


def get_cpu_inputs():
    return [torch.randn(9, 6), torch.randint(0, 9, (4,))]


def get_cpu_shape_variants():
    return [[torch.randn(3, 2), torch.randint(0, 3, (5,))]]
