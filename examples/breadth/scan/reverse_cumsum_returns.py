"""Reinforcement-learning returns-to-go: reverse cumulative sum (flip, cumsum, flip)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, rewards):
        return torch.flip(torch.cumsum(torch.flip(rewards, dims=[1]), dim=1), dims=[1])


def get_inputs():
    return [torch.randn(2048, 1000)]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(1, 200)]]


def get_cpu_inputs():
    return [torch.randn(3, 17)]


def get_cpu_shape_variants():
    return [[torch.randn(2, 2)]]
