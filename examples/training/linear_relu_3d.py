"""Linear layer then ReLU over a (batch, seq, features) input, used in training (8 x 512 x 1024 → 1024 fp32)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(8, 512, 1024)]


def get_init_inputs():
    return [1024, 1024]


def get_cpu_inputs():
    return [torch.randn(2, 3, 16)]


def get_cpu_init_inputs():
    return [16, 24]
