"""One decoding step: Linear on a single token (1, 1, C), latency bound."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(1, 1, 4096)]


def get_init_inputs():
    return [4096, 12288]


def get_shape_variants():
    return [[torch.randn(8, 1, 4096)]]


def get_cpu_inputs():
    return [torch.randn(1, 1, 16)]


def get_cpu_init_inputs():
    return [16, 20]


def get_cpu_shape_variants():
    return [[torch.randn(3, 1, 16)]]
