"""Reference for training: a softmax over the last dimension of scores plus an additive bias given per row (a
(rows, 1) float input broadcast over the softmax's dimension, as an additive attention mask or bias may be
shaped). The bias's true gradient is zero in every row (a softmax is invariant to a constant added to its row):
what any implementation computes for it is rounding noise."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, row_bias):
        return torch.softmax(scores + row_bias, dim=-1)


def get_inputs():
    return [torch.randn(512, 1024), torch.randn(512, 1)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(64, 32), torch.randn(64, 1)]
