"""Box regression loss: Huber with delta 0.5, mean reduction."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, pred, target):
        return F.huber_loss(pred, target, delta=0.5)


def get_inputs():
    return [torch.randn(65536, 4), torch.randn(65536, 4)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(16, 4), torch.randn(16, 4)]]


def get_cpu_inputs():
    return [torch.randn(9, 4), torch.randn(9, 4)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 4), torch.randn(1, 4)]]
