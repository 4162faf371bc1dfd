"""Cross-entropy over a large vocabulary (8192 x 32000 fp32 logits, ~1 GB read; scalar out)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.cross_entropy(logits, target)


def get_inputs():
    return [torch.randn(8192, 32000), torch.randint(0, 32000, (8192,))]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(6, 50), torch.randint(0, 50, (6,))]


def get_cpu_shape_variants():
    return [[torch.randn(3, 130), torch.randint(0, 130, (3,))]]
