"""fp16 Linear (weights in fp16) followed by ReLU (tensor-core GEMM on GPU)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp16"


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out).to(torch.float16)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(8192, 4096, dtype=torch.float16)]


def get_init_inputs():
    return [4096, 4096]


def get_shape_variants():
    return [[torch.randn(4, 4096, dtype=torch.float16)]]


def get_cpu_inputs():
    return [torch.randn(6, 16, dtype=torch.float16)]


def get_cpu_init_inputs():
    return [16, 12]


def get_cpu_shape_variants():
    return [[torch.randn(1, 16, dtype=torch.float16)]]
