"""Reference for training: a per-feature affine map followed by dropout, y = dropout(x * weight + bias, p), as a
transformer block's output projection or an MLP's hidden layer is trained (dropout only while self.training; in
eval mode the identity). Its gradients (of x, weight and bias) are checked too."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, features: int, p: float = 0.25):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))
        self.p = p

    def forward(self, x):
        return F.dropout(x * self.weight + self.bias, self.p, self.training)


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024]


def get_cpu_inputs():
    return [torch.randn(8, 32)]


def get_cpu_init_inputs():
    return [32]
