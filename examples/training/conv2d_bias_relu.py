"""A 3x3 convolution (stride 1, padding 1) with bias, then ReLU, used in training (16 x 64 x 56 x 56 fp32): the
gradients of the input, the weight and the bias are checked too."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(16, 64, 56, 56)]


def get_init_inputs():
    return [64, 64]


def get_cpu_inputs():
    return [torch.randn(2, 3, 6, 6)]


def get_cpu_init_inputs():
    return [3, 4]
