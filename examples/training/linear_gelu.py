"""Linear layer then GELU, a transformer MLP's first half, used in training (4096 x 1024 → 4096 fp32)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(4096, 1024)]


def get_init_inputs():
    return [1024, 4096]


def get_cpu_inputs():
    return [torch.randn(6, 16)]


def get_cpu_init_inputs():
    return [16, 24]
