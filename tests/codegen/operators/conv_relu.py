"""Test operator with an op the template writer has no template for (a float64 convolution: the
convolution templates are fp32)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3).double()

    def forward(self, x):
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(1, 3, 8, 8, dtype=torch.float64)]


def get_init_inputs():
    return []
