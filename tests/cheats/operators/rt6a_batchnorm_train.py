"""Reference for training: BatchNorm1d over the features of a batch of rows. Trained, it normalises with the
batch's own statistics (and moves its running statistics); evaluated, with the running statistics. Its gradients
(of x, weight and bias) are checked too."""

import torch
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024]


def get_cpu_inputs():
    return [torch.randn(8, 16)]


def get_cpu_init_inputs():
    return [16]
