"""Plain matmul with a scaled residual added in the epilogue: (a @ b) * alpha + c (fp32)."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, a, b, c):
        return torch.matmul(a, b) * self.alpha + c


def get_inputs():
    return [torch.randn(4096, 4096), torch.randn(4096, 4096), torch.randn(4096, 4096)]


def get_init_inputs():
    return [0.125]


def get_cpu_inputs():
    return [torch.randn(19, 22), torch.randn(22, 17), torch.randn(19, 17)]


def get_cpu_shape_variants():
    return [[torch.randn(8, 5), torch.randn(5, 30), torch.randn(8, 30)]]
