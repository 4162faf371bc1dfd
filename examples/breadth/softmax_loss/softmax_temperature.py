"""Sampling distribution: softmax(logits / T) over the vocabulary."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, logits):
        return torch.softmax(logits / self.temperature, dim=-1)


def get_inputs():
    return [torch.randn(64, 32000)]


def get_init_inputs():
    return [0.7]


def get_shape_variants():
    return [[torch.randn(1, 32000)]]


def get_cpu_inputs():
    return [torch.randn(4, 50)]


def get_cpu_init_inputs():
    return [0.7]


def get_cpu_shape_variants():
    return [[torch.randn(1, 6)]]
