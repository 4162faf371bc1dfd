"""Reference for training (rt16b): a fused residual add and per-feature scale, as a pre-norm transformer block's
"add & scale" has it: s = x + residual (the updated residual stream, returned for the next block) and
y = s * weight (the branch's input). Two floating outputs; the gradients of x, residual and weight are checked.
In a real network the last block's residual stream output is often unused (its gradient is None)."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))

    def forward(self, x, residual):
        s = x + residual
        return s * self.weight, s


def get_inputs():
    return [torch.randn(512, 1024), torch.randn(512, 1024)]


def get_init_inputs():
    return [1024]


def get_cpu_inputs():
    return [torch.randn(6, 16), torch.randn(6, 16)]


def get_cpu_init_inputs():
    return [16]
