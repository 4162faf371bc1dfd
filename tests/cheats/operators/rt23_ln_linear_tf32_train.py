"""Reference for training: a pre-norm projection, LayerNorm over the last dimension (eps 1e-5, learned weight and
bias) then a linear layer, under the tf32 class (TF32 tensor cores allowed, as torch.backends.cuda.matmul.allow_tf32
trains); the gradients of x and of all four parameters are checked too."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, hidden: int, out_features: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden, eps=1e-5)
        self.proj = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.proj(self.ln(x))


def get_inputs():
    return [torch.randn(4096, 1024)]


def get_init_inputs():
    return [1024, 1024]


def get_cpu_inputs():
    return [torch.randn(16, 32)]


def get_cpu_init_inputs():
    return [32, 24]
