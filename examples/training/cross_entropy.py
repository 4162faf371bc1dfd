"""Cross-entropy over a vocabulary, a language model's loss, used in training (4096 x 32000 fp32 logits; scalar out)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"
FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


def get_inputs():
    return [torch.randn(4096, 32000), torch.randint(0, 32000, (4096,))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(6, 40), torch.randint(0, 40, (6,))]


def get_cpu_init_inputs():
    return []
