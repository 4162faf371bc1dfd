"""Mean squared error between predictions and targets (two 256 MB inputs, scalar out)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.mse_loss(pred, target)


def get_inputs():
    return [torch.randn(4096, 16384), torch.randn(4096, 16384)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(13, 29), torch.randn(13, 29)]


def get_cpu_shape_variants():
    return [[torch.randn(3, 1000), torch.randn(3, 1000)]]
