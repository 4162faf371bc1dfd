"""Multi-label loss: BCE with logits and a per-class positive weight buffer."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.register_buffer("pos_weight", 1.0 + torch.rand(classes) * 3)

    def forward(self, logits, target):
        return F.binary_cross_entropy_with_logits(logits, target, pos_weight=self.pos_weight)


def get_inputs():
    return [torch.randn(4096, 80), torch.rand(4096, 80)]


def get_init_inputs():
    return [80]


def get_shape_variants():
    return [[torch.randn(2, 80), torch.rand(2, 80)]]


def get_cpu_inputs():
    return [torch.randn(5, 7), torch.rand(5, 7)]


def get_cpu_init_inputs():
    return [7]


def get_cpu_shape_variants():
    return [[torch.randn(1, 7), torch.rand(1, 7)]]
