"""torch.gather along dim 1: pick per-row entries (log-probs of chosen actions)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, index):
        return torch.gather(x, 1, index)


def get_inputs():
    return [torch.randn(4096, 32000), torch.randint(0, 32000, (4096, 4,))]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 32000), torch.randint(0, 32000, (1, 1,))]]


def get_cpu_inputs():
    return [torch.randn(5, 9), torch.randint(0, 9, (5, 3,))]


def get_cpu_shape_variants():
    return [[torch.randn(2, 4), torch.randint(0, 4, (2, 1,))]]
