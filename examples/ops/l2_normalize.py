"""Row-wise L2 normalization x / max(||x||_2, eps) (16384 x 4096 fp32, 512 MB moved)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.normalize(x, p=2.0, dim=1)


def get_inputs():
    return [torch.randn(16384, 4096)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(7, 33)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 100)]]
