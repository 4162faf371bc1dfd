"""Reference for training: RMSNorm over the last dimension with a learned scale (eps 1e-6), as transformer blocks
apply it to token activations. Its gradients (of x and the scale) are checked too."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = 1e-6

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(8, 1024, 2048)]


def get_init_inputs():
    return [2048]


def get_cpu_inputs():
    return [torch.randn(16, 32)]


def get_cpu_init_inputs():
    return [32]
