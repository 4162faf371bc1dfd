"""Squeeze-and-excitation: global mean, fc-relu-fc-sigmoid, channel rescale."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels, reduced):
        super().__init__()
        self.fc1 = nn.Linear(channels, reduced)
        self.fc2 = nn.Linear(reduced, channels)

    def forward(self, x):
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
        return x * s[:, :, None, None]


def get_inputs():
    return [torch.randn(64, 256, 28, 28)]


def get_init_inputs():
    return [256, 16]


def get_shape_variants():
    return [[torch.randn(1, 256, 7, 7)]]


def get_cpu_inputs():
    return [torch.randn(2, 6, 3, 4)]


def get_cpu_init_inputs():
    return [6, 2]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6, 2, 1)]]
