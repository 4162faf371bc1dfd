"""nn.LSTMCell step returning (h, c): a recurrent cell as users write it with the library module."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, d_in, d_hidden):
        super().__init__()
        self.cell = nn.LSTMCell(d_in, d_hidden)

    def forward(self, x, h, c):
        h2, c2 = self.cell(x, (h, c))
        return h2, c2


def get_inputs():
    return [torch.randn(1024, 512), torch.randn(1024, 1024), torch.randn(1024, 1024)]


def get_init_inputs():
    return [512, 1024]


def get_shape_variants():
    return [[torch.randn(1, 512), torch.randn(1, 1024), torch.randn(1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(3, 5), torch.randn(3, 4), torch.randn(3, 4)]


def get_cpu_init_inputs():
    return [5, 4]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5), torch.randn(1, 4), torch.randn(1, 4)]]
