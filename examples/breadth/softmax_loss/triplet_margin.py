"""Metric learning: triplet margin loss (p=2, margin 0.5) over anchor, positive, negative embeddings."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=0.5)


def get_inputs():
    return [torch.randn(8192, 256), torch.randn(8192, 256), torch.randn(8192, 256)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(4, 256), torch.randn(4, 256), torch.randn(4, 256)]]


def get_cpu_inputs():
    return [torch.randn(6, 8), torch.randn(6, 8), torch.randn(6, 8)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 5), torch.randn(1, 5), torch.randn(1, 5)]]
