"""Reference for training: two parallel ReLU branches of one shape summed, y = relu(a(x)) + relu(b(x)) (a
multi-branch block, a two-expert ensemble with equal gates), tf32 class, whose gradients (of x and of both
branches' weights and biases) are checked too. Each branch is an nn.Linear with its own kaiming-uniform draw."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.a = nn.Linear(in_features, out_features)
        self.b = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.a(x)) + torch.relu(self.b(x))


def get_inputs():
    return [torch.randn(256, 512)]


def get_init_inputs():
    return [512, 512]


def get_cpu_inputs():
    return [torch.randn(16, 24)]


def get_cpu_init_inputs():
    return [24, 20]
