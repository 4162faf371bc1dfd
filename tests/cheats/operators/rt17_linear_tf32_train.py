"""Reference for training: a linear layer y = x W^T + b under the tf32 class (TF32 tensor cores allowed, as
torch.backends.cuda.matmul.allow_tf32 trains), whose gradients (of x, W and b) are checked too."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024, 1024]


def get_cpu_inputs():
    return [torch.randn(16, 24)]


def get_cpu_init_inputs():
    return [24, 20]
