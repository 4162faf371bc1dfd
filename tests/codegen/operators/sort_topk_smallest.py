"""Test operator (sorts): the k smallest distances of each row (values only), from rows longer than a tile: topk's
tiles, each one's k best merged with the running ones."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, d):
        return torch.topk(d, self.k, dim=-1, largest=False).values


def get_inputs():
    return [torch.randn(128, 5000)]


def get_init_inputs():
    return [8]


def get_cpu_inputs():
    return [torch.randn(3, 600)]


def get_cpu_init_inputs():
    return [5]


def get_cpu_shape_variants():
    return [[torch.randn(2, 300)]]
