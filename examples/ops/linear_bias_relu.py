"""Linear layer with bias followed by ReLU and a scale: a matmul with a fused epilogue (fp32)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.linear(x)) * 2.0


def get_inputs():
    return [torch.randn(4096, 4096)]


def get_init_inputs():
    return [4096, 4096]


def get_cpu_inputs():
    return [torch.randn(20, 24)]


def get_cpu_init_inputs():
    return [24, 40]


def get_cpu_shape_variants():
    return [[torch.randn(7, 24)]]
