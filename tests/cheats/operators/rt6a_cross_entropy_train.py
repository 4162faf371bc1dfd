"""Reference for training: mean cross-entropy of logits against integer class targets (targets at -100, the
ignore_index, are left out of the mean), whose gradient of the logits is checked too: a language model's loss."""

import torch
from torch import nn
from torch.nn import functional as F

FOUNDRY_TRAINING = True


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


def get_inputs():
    return [torch.randn(4096, 1000), torch.randint(0, 1000, (4096,))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(8, 10), torch.randint(0, 10, (8,))]


def get_cpu_shape_variants():
    return [[torch.randn(5, 33), torch.randint(0, 33, (5,))]]
