import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(64, 1000)]


def get_cpu_inputs():
    return [torch.randn(6, 37)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 50)]]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(32, 777)]]
