"""bf16 Linear without bias followed by SiLU."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "bf16"


class Model(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out, bias=False).to(torch.bfloat16)

    def forward(self, x):
        return F.silu(self.fc(x))


def get_inputs():
    return [torch.randn(4, 2048, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return [4096, 11008]


def get_shape_variants():
    return [[torch.randn(1, 1, 4096, dtype=torch.bfloat16)]]


def get_cpu_inputs():
    return [torch.randn(2, 3, 16, dtype=torch.bfloat16)]


def get_cpu_init_inputs():
    return [16, 20]


def get_cpu_shape_variants():
    return [[torch.randn(1, 1, 16, dtype=torch.bfloat16)]]
