"""Reference for training: LayerNorm over the last dimension with learned weight and bias (eps 1e-5), in a model trained
under the tf32 class (allow_tf32)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(4096, 2048)]


def get_init_inputs():
    return [2048]


def get_cpu_inputs():
    return [torch.randn(16, 32)]


def get_cpu_init_inputs():
    return [32]
