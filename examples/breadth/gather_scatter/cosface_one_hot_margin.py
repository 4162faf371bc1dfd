"""CosFace logits: s * (cos - m * one_hot(labels)), one_hot built with F.one_hot."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, scale, margin):
        super().__init__()
        self.s = scale
        self.m = margin

    def forward(self, cos, labels):
        one_hot = F.one_hot(labels, cos.shape[1]).to(cos.dtype)
        return self.s * (cos - self.m * one_hot)


def get_inputs():
    return [torch.rand(1024, 10000) * 2 - 1, torch.randint(0, 10000, (1024,))]


def get_init_inputs():
    return [64.0, 0.35]


def get_shape_variants():
    return [[torch.rand(2, 10000) * 2 - 1, torch.randint(0, 10000, (2,))]]


def get_cpu_inputs():
    return [torch.rand(4, 9) * 2 - 1, torch.randint(0, 9, (4,))]


def get_cpu_init_inputs():
    return [64.0, 0.35]


def get_cpu_shape_variants():
    return [[torch.rand(1, 3) * 2 - 1, torch.randint(0, 3, (1,))]]
