"""Smooth L1 (Huber-like) loss with beta, mean reduction (two 256 MB inputs, scalar out)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, pred, target):
        return F.smooth_l1_loss(pred, target, beta=self.beta)


def get_inputs():
    return [torch.randn(64, 1024, 1024), torch.randn(64, 1024, 1024)]


def get_init_inputs():
    return [0.5]


def get_cpu_inputs():
    return [torch.randn(2, 7, 19), torch.randn(2, 7, 19)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 300), torch.randn(1, 3, 300)]]
