"""Zero padded time steps from integer lengths: where(arange(T) < lengths[:, None], x, 0)."""

import torch
import torch.nn.functional as F
from torch import nn

FOUNDRY_PRECISION = "fp32"


class Model(nn.Module):
    def forward(self, x, lengths):
        steps = torch.arange(x.shape[1], device=x.device)
        mask = steps[None, :] < lengths[:, None]
        return torch.where(mask[..., None], x, 0.0)


def get_inputs():
    return [torch.randn(64, 1000, 256), torch.randint(1, 1001, (64,))]


def get_init_inputs():
    return []


def get_shape_variants():
    return [[torch.randn(2, 8, 256), torch.tensor([8, 3])]]


def get_cpu_inputs():
    return [torch.randn(3, 6, 4), torch.tensor([6, 2, 4])]


def get_cpu_shape_variants():
    return [[torch.randn(1, 3, 2), torch.tensor([1])]]
