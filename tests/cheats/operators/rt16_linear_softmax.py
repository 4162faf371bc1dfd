"""Reference: a classifier head, softmax(x @ W^T + b) over the classes. TF32 tolerance: the projection may use
tl.dot's default precision."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"


class Model(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.proj = nn.Linear(features, classes)

    def forward(self, x):
        return torch.softmax(self.proj(x), dim=-1)


def get_inputs():
    return [torch.randn(4096, 1024)]


def get_init_inputs():
    return [1024, 4096]


def get_cpu_inputs():
    return [torch.randn(16, 32)]


def get_cpu_init_inputs():
    return [32, 64]
