"""Reference for training (rt7): a per-feature affine map over the last dimension, y = x * weight + bias, whose
gradients (of x, weight and bias) are checked too."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x):
        return x * self.weight + self.bias


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024]


def get_cpu_inputs():
    return [torch.randn(6, 16)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 5, 16)]]  # (batch, tokens, features): a language model's activations


def get_cpu_init_inputs():
    return [16]


def get_shape_variants():
    return [[torch.randn(8, 256, 1024)]]
