"""Post-LN transformer sublayer: LayerNorm(x + sublayer(x)), the residual add fused in front."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim, eps=1e-12)

    def forward(self, x, y):
        return self.ln(x + y)


def get_inputs():
    return [torch.randn(32, 512, 768), torch.randn(32, 512, 768)]


def get_init_inputs():
    return [768]


def get_shape_variants():
    return [[torch.randn(1, 3, 768), torch.randn(1, 3, 768)]]


def get_cpu_inputs():
    return [torch.randn(2, 4, 12), torch.randn(2, 4, 12)]


def get_cpu_init_inputs():
    return [12]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 12), torch.randn(1, 1, 12)]]
