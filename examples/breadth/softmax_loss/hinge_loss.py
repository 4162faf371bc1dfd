"""SVM-style hinge loss with labels in {-1, +1}: mean(clamp(1 - y * score, min=0))."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, score, y):
        return torch.clamp(1.0 - y * score, min=0.0).mean()


def get_inputs():
    return [torch.randn(1048576), torch.randint(0, 2, (1048576,)).float() * 2 - 1]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(64), torch.randint(0, 2, (64,)).float() * 2 - 1]]


def get_cpu_inputs():
    return [torch.randn(37), torch.randint(0, 2, (37,)).float() * 2 - 1]


def get_cpu_shape_variants():
    return [[torch.randn(3), torch.tensor([1.0, -1.0, 1.0])]]
