"""Sum over the batch dim (dim 0), as in a bias gradient or a batch statistic."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=0)


def get_inputs():
    return [torch.randn(65536, 1024)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(4, 1024)]]


def get_cpu_inputs():
    return [torch.randn(13, 6)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 1)]]
