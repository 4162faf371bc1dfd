"""BatchNorm over (B, C, L) with running statistics (functional form, training=False)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(channels))
        self.bias = nn.Parameter(0.1 * torch.randn(channels))
        self.register_buffer("running_mean", 0.1 * torch.randn(channels))
        self.register_buffer("running_var", 1.0 + 0.1 * torch.rand(channels))

    def forward(self, x):
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, training=False, eps=1e-5)


def get_inputs():
    return [torch.randn(64, 512, 1024)]


def get_init_inputs():
    return [512]


def get_shape_variants():
    return [[torch.randn(1, 512, 8)]]


def get_cpu_inputs():
    return [torch.randn(3, 5, 7)]


def get_cpu_init_inputs():
    return [5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5, 1)]]
