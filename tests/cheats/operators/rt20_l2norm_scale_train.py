"""Reference for training: L2 normalization over the last dimension with a learnable per-feature scale,
y = F.normalize(x, dim=-1) * g (a cosine-similarity head, QK-norm, a normalized embedding for contrastive
learning). Its gradients (of x and g) are checked too."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.g = nn.Parameter(torch.ones(features))

    def forward(self, x):
        return F.normalize(x, dim=-1) * self.g


def get_inputs():
    return [torch.randn(4096, 512)]


def get_init_inputs():
    return [512]


def get_cpu_inputs():
    return [torch.randn(16, 32)]


def get_cpu_init_inputs():
    return [32]
