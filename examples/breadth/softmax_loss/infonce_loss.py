"""CLIP/SimCLR InfoNCE: normalized a @ normalized b.T / tau, cross-entropy against the diagonal."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, tau):
        super().__init__()
        self.tau = tau

    def forward(self, a, b):
        logits = F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).t() / self.tau
        labels = torch.arange(a.shape[0], device=a.device)
        return F.cross_entropy(logits, labels)


def get_inputs():
    return [torch.randn(4096, 512), torch.randn(4096, 512)]


def get_init_inputs():
    return [0.07]


def get_shape_variants():
    return [[torch.randn(8, 512), torch.randn(8, 512)]]


def get_cpu_inputs():
    return [torch.randn(6, 8), torch.randn(6, 8)]


def get_cpu_init_inputs():
    return [0.07]


def get_cpu_shape_variants():
    return [[torch.randn(2, 3), torch.randn(2, 3)]]
