"""Test operator (scans): discounted returns, a cumulative product of gammas times a reverse (flip, cumsum, flip)
exclusive sum of rewards: a forward scan kernel and a reverse one."""

import torch
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, gamma, rewards):
        return torch.cumprod(gamma * 0.1 + 0.9, dim=1) * (
            torch.flip(torch.cumsum(torch.flip(rewards, dims=[1]), dim=1), dims=[1]) - rewards
        )


def get_inputs():
    return [torch.rand(64, 256), torch.randn(64, 256)]


def get_init_inputs():
    return []


def get_cpu_inputs():
    return [torch.rand(3, 13), torch.randn(3, 13)]


def get_cpu_shape_variants():
    return [[torch.rand(1, 4), torch.randn(1, 4)]]
