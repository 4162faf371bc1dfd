"""Segment sum (graph message aggregation): scatter_add rows of x into their segment."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, segments):
        super().__init__()
        self.segments = segments

    def forward(self, x, segment):
        out = torch.zeros(self.segments, x.shape[1], dtype=x.dtype, device=x.device)
        return out.scatter_add(0, segment[:, None].expand(-1, x.shape[1]), x)


def get_inputs():
    return [torch.randn(262144, 128), torch.randint(0, 4096, (262144,))]


def get_init_inputs():
    return [4096]


def get_shape_variants():
    return [[torch.randn(16, 128), torch.randint(0, 4096, (16,))]]


def get_cpu_inputs():
    return [torch.randn(11, 5), torch.randint(0, 4, (11,))]


def get_cpu_init_inputs():
    return [4]


def get_cpu_shape_variants():
    return [[torch.randn(3, 2), torch.randint(0, 4, (3,))]]
