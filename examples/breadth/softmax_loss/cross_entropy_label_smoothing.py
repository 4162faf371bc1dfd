"""Classification loss with label smoothing 0.1 (mean over the batch)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, logits, target):
        return F.cross_entropy(logits, target, label_smoothing=0.1)


def get_inputs():
    return [torch.randn(4096, 1000), torch.randint(0, 1000, (4096,))]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 1000), torch.randint(0, 1000, (2,))]]


def get_cpu_inputs():
    return [torch.randn(6, 10), torch.randint(0, 10, (6,))]


def get_cpu_shape_variants():
    return [[torch.randn(1, 4), torch.randint(0, 4, (1,))]]
