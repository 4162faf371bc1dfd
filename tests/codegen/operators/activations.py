"""Test operator: a long chain of elementwise activations with scalar and row-vector broadcasts."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.gain = nn.Parameter(torch.randn(width))

    def forward(self, x, y):
        h = F.leaky_relu(x, 0.1) + F.elu(y) * self.gain
        h = F.hardswish(h) - F.softplus(h) + torch.tanh(h) * F.mish(x)
        h = torch.where(h > 0.2, F.hardsigmoid(h), torch.exp(-h.abs()))
        return h.pow(2) + F.relu6(y) - torch.sqrt(x.abs() + 1.0)


def get_inputs():
    return [torch.randn(6, 11, 19), torch.randn(6, 11, 19)]


def get_init_inputs():
    return [19]
