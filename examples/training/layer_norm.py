"""LayerNorm over the hidden dim with affine parameters, used in training (4096 x 4096 fp32): the gradients of the
input, the weight and the bias are checked too."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(4096, 4096)]


def get_init_inputs():
    return [4096]


def get_cpu_inputs():  # the rank of get_inputs: a generated kernel is specialised to the rank it was captured at
    return [torch.randn(6, 24)]


def get_cpu_init_inputs():
    return [24]
