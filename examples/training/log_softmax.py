"""Log-softmax over the last dim, used in training (4096 x 32000 fp32 logits)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(4096, 32000)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(5, 40)]


def get_cpu_init_inputs():
    return []
