"""Hand-written GRU cell: reset/update gates from x and h projections, candidate state, blend."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, d_in, d_hidden):
        super().__init__()
        self.x2h = nn.Linear(d_in, 3 * d_hidden)
        self.h2h = nn.Linear(d_hidden, 3 * d_hidden)

    def forward(self, x, h):
        xr, xz, xn = self.x2h(x).chunk(3, dim=-1)
        hr, hz, hn = self.h2h(h).chunk(3, dim=-1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return (1 - z) * n + z * h


def get_inputs():
    return [torch.randn(4096, 512), torch.randn(4096, 1024)]


def get_init_inputs():
    return [512, 1024]


def get_shape_variants():
    return [[torch.randn(1, 512), torch.randn(1, 1024)]]


def get_cpu_inputs():
    return [torch.randn(3, 6), torch.randn(3, 5)]


def get_cpu_init_inputs():
    return [6, 5]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6), torch.randn(1, 5)]]
