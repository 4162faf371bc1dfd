import torch
from torch import nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(256, 128), torch.randn(128, 192)]


def get_cpu_inputs():
    return [torch.randn(24, 16), torch.randn(16, 20)]


def get_init_inputs():
    return []
