"""Reference for training: LayerScale (CaiT, ConvNeXt, DINOv2): a residual branch's output scaled per channel by a
learnable gamma initialised small (1e-5), y = x * gamma. Its input's gradient (g * gamma) is about 1e5 times
smaller than gamma's own (a sum over the rows of g * x): the one a network's whole branch trains through."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, dim: int, init_values: float = 1e-5):
        super().__init__()
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


def get_inputs():
    return [torch.randn(4096, 768)]


def get_init_inputs():
    return [768]


def get_cpu_inputs():
    return [torch.randn(256, 32)]


def get_cpu_init_inputs():
    return [32]
