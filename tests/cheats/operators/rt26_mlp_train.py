"""Reference for training: a transformer-style MLP block's body, y = fc2(relu(fc1(x))) (d -> 4d -> d, the feed-forward
of a residual block), tf32 class, whose gradients (of x and of both layers' weights and biases) are checked too. Each
layer is an nn.Linear with its own kaiming-uniform draw; the two weights have transposed shapes (4d x d, d x 4d)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_model)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def get_inputs():
    return [torch.randn(256, 512)]


def get_init_inputs():
    return [512, 2048]


def get_cpu_inputs():
    return [torch.randn(16, 24)]


def get_cpu_init_inputs():
    return [24, 96]
