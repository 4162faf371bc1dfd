"""1-D max pooling over time (kernel 3, stride 2), audio front ends."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x):
        return F.max_pool1d(x, kernel_size=3, stride=2)


def get_inputs():
    return [torch.randn(32, 512, 16000)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 512, 9)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 17)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 2, 4)]]
