"""Row minimum with its index (values, indices): nearest-codebook search over distances."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, dist):
        values, indices = torch.min(dist, dim=1)
        return values, indices


def get_inputs():
    return [torch.randn(65536, 1024)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(8, 1024)]]


def get_cpu_inputs():
    return [torch.randn(6, 11)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2)]]
