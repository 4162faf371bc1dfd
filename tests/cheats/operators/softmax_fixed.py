"""Reference: the row softmax again, but the operator declares no shape variants (many real operators
will not): the evaluator only ever sees one shape."""

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


def get_init_inputs():
    return []
