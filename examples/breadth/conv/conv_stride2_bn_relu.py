"""ResNet downsample: 3x3 stride-2 conv without bias, inference BatchNorm, ReLU."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride=2, padding=1, bias=False)
        self.register_buffer("mean", 0.1 * torch.randn(c_out))
        self.register_buffer("var", 1.0 + torch.rand(c_out))
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(c_out))
        self.bias = nn.Parameter(0.1 * torch.randn(c_out))

    def forward(self, x):
        y = F.batch_norm(self.conv(x), self.mean, self.var, self.weight, self.bias, training=False)
        return F.relu(y)


def get_inputs():
    return [torch.randn(32, 64, 112, 112)]


def get_init_inputs():
    return [64, 128]


def get_shape_variants():
    return [[torch.randn(1, 64, 8, 8)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 7, 6)]


def get_cpu_init_inputs():
    return [3, 5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 3, 3)]]
