"""Reference for training: a wide linear layer y = x W^T + b (4096 -> 4096, a transformer MLP's or a 7B model's
projection size; its state, 16.8M elements, is over the initial-state check's full-size cap) under the tf32 class,
whose gradients (of x, W and b) are checked too."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(256, 4096)]


def get_init_inputs():
    return [4096, 4096]


def get_cpu_inputs():
    return [torch.randn(16, 24)]


def get_cpu_init_inputs():
    return [24, 20]
