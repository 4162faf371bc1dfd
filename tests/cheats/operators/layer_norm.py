"""Reference: layer normalization over the last dimension (nn.LayerNorm with its affine weight and bias)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.ln.weight.copy_(torch.linspace(0.5, 1.5, hidden))
            self.ln.bias.copy_(torch.linspace(-0.2, 0.2, hidden))

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(512, 2048)]


def get_init_inputs():
    return [2048]


def get_cpu_inputs():
    return [torch.randn(8, 32)]


def get_cpu_init_inputs():
    return [32]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3, 32)]]
