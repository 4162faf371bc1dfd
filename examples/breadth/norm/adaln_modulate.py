"""DiT adaptive LayerNorm: layer_norm(x) * (1 + scale[:, None]) + shift[:, None]."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, shift, scale):
        h = F.layer_norm(x, (x.shape[-1],), eps=1e-6)
        return h * (1 + scale[:, None, :]) + shift[:, None, :]


def get_inputs():
    return [torch.randn(16, 1024, 1152), torch.randn(16, 1152), torch.randn(16, 1152)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 4, 1152), torch.randn(1, 1152), torch.randn(1, 1152)]]


def get_cpu_inputs():
    return [torch.randn(2, 5, 16), torch.randn(2, 16), torch.randn(2, 16)]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 7), torch.randn(1, 7), torch.randn(1, 7)]]
