"""Reference: a @ b + bias for 2-D a (M, K), b (K, N) and bias (N,). TF32 tolerance: a kernel may use tl.dot's
default precision."""

import torch
from torch import nn

FOUNDRY_PRECISION = "tf32"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return a @ b + bias


def get_inputs():
    return [torch.randn(1024, 512), torch.randn(512, 768), torch.randn(768)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.randn(16, 24), torch.randn(24, 20), torch.randn(20)]


def get_cpu_shape_variants():
    return [[torch.randn(9, 17), torch.randn(17, 33), torch.randn(33)]]
