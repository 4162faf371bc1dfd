"""Decoder upsampling: ConvTranspose2d (k4, s2, p1) doubles H and W, then ReLU."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.up = nn.ConvTranspose2d(c_in, c_out, 4, stride=2, padding=1)

    def forward(self, x):
        return F.relu(self.up(x))


def get_inputs():
    return [torch.randn(16, 128, 64, 64)]


def get_init_inputs():
    return [128, 64]


def get_shape_variants():
    return [[torch.randn(1, 128, 4, 4)]]


def get_cpu_inputs():
    return [torch.randn(1, 3, 3, 4)]


def get_cpu_init_inputs():
    return [3, 2]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 2, 2)]]
