"""Reference: rotary position embedding in complex form (as Llama's apply_rotary_emb): adjacent feature pairs read as
complex numbers, multiplied by unit phases per position; the complex result is returned (a complex64 output)."""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, seq: int, dim: int):
        super().__init__()
        inv = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        theta = torch.outer(torch.arange(seq).float(), inv)
        self.register_buffer("cos", torch.cos(theta))
        self.register_buffer("sin", torch.sin(theta))

    def forward(self, x):
        re, im = x[..., 0::2], x[..., 1::2]
        return torch.complex(re * self.cos - im * self.sin, re * self.sin + im * self.cos)


def get_inputs():
    return [torch.randn(8, 1024, 128)]


def get_init_inputs():
    return [1024, 128]


def get_cpu_inputs():
    return [torch.randn(2, 6, 8)]


def get_cpu_init_inputs():
    return [6, 8]
