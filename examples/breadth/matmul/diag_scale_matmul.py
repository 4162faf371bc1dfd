"""Row scaling written as in textbook code: torch.diag(d) @ X."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, d, x):
        return torch.diag(d) @ x


def get_inputs():
    return [torch.randn(4096), torch.randn(4096, 4096)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(16), torch.randn(16, 1024)]]


def get_cpu_inputs():
    return [torch.randn(11), torch.randn(11, 6)]


def get_cpu_shape_variants():
    return [[torch.randn(2), torch.randn(2, 3)]]
